// Package gate is a module of its own that the depsync test's module
// requires: the synchronisation its users rely on happens in its code,
// which the instrumenting recorder must record as well.
package gate

import "sync"

// A Gate lets its waiters through once it is opened.
type Gate struct {
	ch chan struct{}
}

// New returns a closed gate.
func New() *Gate { return &Gate{ch: make(chan struct{})} }

// Open lets every waiter through.
func (g *Gate) Open() { close(g.ch) }

// Wait returns once the gate is open.
func (g *Gate) Wait() { <-g.ch }

// Run runs each function on a goroutine of its own and returns when all
// have returned.
func Run(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func(f func()) {
			defer wg.Done()
			f()
		}(f)
	}
	wg.Wait()
}

// Counter is a counter whose every method takes its lock.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Do calls f with the counter's lock held.
func (c *Counter) Do(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}
