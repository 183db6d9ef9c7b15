// Package reset drains counters that other goroutines add to.
package reset

import (
	"sync"
	"sync/atomic"
)

// Meter's Tick loads what was marked, then stores 0: a Mark in between
// is lost. TickSwap takes and clears it at once.
type Meter struct {
	uncounted int64 // want uncounted:`atomic\(atomic.Add at reset.go:\d+\)`
	total     int64 // want total:`atomic\(atomic.Add at reset.go:\d+\)`
}

func (m *Meter) Mark(n int64) { atomic.AddInt64(&m.uncounted, n) }

func (m *Meter) Tick() {
	n := atomic.LoadInt64(&m.uncounted) // want `the atomic load of m.uncounted and its later atomic Store are two steps; an Add that another goroutine makes between them is lost: use Swap`
	atomic.AddInt64(&m.total, n)
	atomic.StoreInt64(&m.uncounted, 0)
}

func (m *Meter) TickSwap() {
	n := atomic.SwapInt64(&m.uncounted, 0)
	atomic.AddInt64(&m.total, n)
}

// Locked's Drain loads and stores in one critical section of the lock
// that every Add holds.
type Locked struct {
	mu sync.Mutex
	n  int64 // want n:`atomic\(atomic.Add at reset.go:\d+\)`
}

func (l *Locked) Add(d int64) {
	l.mu.Lock()
	atomic.AddInt64(&l.n, d)
	l.mu.Unlock()
}

func (l *Locked) Drain() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := atomic.LoadInt64(&l.n)
	atomic.StoreInt64(&l.n, 0)
	return v
}

// Counter's methods are its atomic operations.
type Counter int64

func (c *Counter) Incr(v int64) { atomic.AddInt64((*int64)(c), v) }
func (c *Counter) Reset()       { atomic.StoreInt64((*int64)(c), 0) }
func (c *Counter) Value() int64 { return atomic.LoadInt64((*int64)(c)) }

// Window's Roll reads a part, then resets it, through Counter's
// methods: an Incr of the part in between is lost.
type Window struct {
	parts []Counter
	total Counter
}

func (w *Window) Add(i int, v int64) { w.parts[i].Incr(v) }

func (w *Window) Roll(i int) {
	w.total.Incr(-w.parts[i].Value()) // want `the atomic load of w.parts\[\] and its later atomic Store are two steps`
	w.parts[i].Reset()
}
