// Package metricvec is modelled on the metric vectors of the Prometheus Go
// client (client_golang's MetricVec and its metricMap): WithLabelValues
// looks the child metric up under the vector's read lock and, on a miss,
// takes the write lock, looks again and creates it only if it is still
// missing; each child counter's methods are one critical section each.
// Request handlers count their requests through the Counter interface
// in a loop and log the counter's value after each increment, two calls
// whose second only logs.
//
// Ground truth: no atomicity violation (the vector's store re-checks
// under the write lock; no handler means its increment and its logging
// read as one step).
package metricvec

import (
	"strings"
	"sync"
)

// Counter is a metric that only goes up.
type Counter interface {
	Inc()
	Add(v float64)
	Value() float64
}

type counter struct {
	mu  sync.Mutex
	val float64
}

// Inc adds one.
func (c *counter) Inc() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.val++
}

// Add adds v.
func (c *counter) Add(v float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.val += v
}

// Value returns the count.
func (c *counter) Value() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.val
}

// CounterVec is a family of counters partitioned by label values.
type CounterVec struct {
	mtx     sync.RWMutex
	metrics map[string]*counter
}

// NewCounterVec returns an empty family.
func NewCounterVec() *CounterVec {
	return &CounterVec{metrics: make(map[string]*counter)}
}

// WithLabelValues returns the counter of the label values lvs, creating
// it on first use.
func (v *CounterVec) WithLabelValues(lvs ...string) Counter {
	key := strings.Join(lvs, "\xff")
	v.mtx.RLock()
	c, ok := v.metrics[key]
	v.mtx.RUnlock()
	if ok {
		return c
	}
	v.mtx.Lock()
	defer v.mtx.Unlock()
	if c, ok := v.metrics[key]; ok {
		return c
	}
	c = &counter{}
	v.metrics[key] = c
	return c
}
