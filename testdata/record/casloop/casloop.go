// Package casloop updates a counter with a load then CompareAndSwap
// retry loop: another goroutine's update between the load and the
// CompareAndSwap makes it fail and retry, so no update is lost.
package casloop

import "sync/atomic"

// Counter is a count that goroutines add to.
type Counter struct {
	n int64
}

// Add adds d to the count; between, if not nil, runs between the load
// and the CompareAndSwap of each try.
func (c *Counter) Add(d int64, between func()) {
	for {
		old := atomic.LoadInt64(&c.n)
		if between != nil {
			between()
		}
		if atomic.CompareAndSwapInt64(&c.n, old, old+d) {
			return
		}
	}
}

// Count returns the count.
func (c *Counter) Count() int64 {
	return atomic.LoadInt64(&c.n)
}
