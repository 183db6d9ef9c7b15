// Package condwait orders two increments through a condition variable:
// the waiter's increment follows the Wait that the worker's Signal ends.
package condwait

import "sync"

// Counter is a count behind a mutex.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Add reads and writes the count in two critical sections.
func (c *Counter) Add(d int) {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + d
	c.mu.Unlock()
}

// Gate is a flag that goroutines wait for.
type Gate struct {
	mu   sync.Mutex
	cond *sync.Cond
	open bool
}

// NewGate returns a closed gate.
func NewGate() *Gate {
	g := &Gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Open opens the gate and wakes a waiter.
func (g *Gate) Open() {
	g.mu.Lock()
	g.open = true
	g.cond.Signal()
	g.mu.Unlock()
}

// Await returns once the gate is open.
func (g *Gate) Await() {
	g.mu.Lock()
	for !g.open {
		g.cond.Wait()
	}
	g.mu.Unlock()
}
