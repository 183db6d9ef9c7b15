// Package condwait orders two updates of a counter through a condition
// variable alone: the waiter's reset follows the Wait that the worker's
// Signal ends, and nothing the waiter reads was written after the
// worker's increment.
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

// Reset sets the count to zero.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.n = 0
	c.mu.Unlock()
}

// Gate lets goroutines wait for a signal.
type Gate struct {
	mu    sync.Mutex
	cond  *sync.Cond
	armed bool
}

// NewGate returns a gate that is not armed.
func NewGate() *Gate {
	g := &Gate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Arm says a signal will come.
func (g *Gate) Arm() {
	g.mu.Lock()
	g.armed = true
	g.mu.Unlock()
}

// Signal wakes a waiter.
func (g *Gate) Signal() {
	g.mu.Lock()
	g.cond.Signal()
	g.mu.Unlock()
}

// Await waits for one signal, once the gate is armed.
func (g *Gate) Await() {
	g.mu.Lock()
	g.cond.Wait()
	for !g.armed {
		g.cond.Wait()
	}
	g.mu.Unlock()
}
