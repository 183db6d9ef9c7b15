// Package wgorder is the split counter of package splitcounter made safe
// by ordering: Twice has one goroutine increment, waits for it with a
// WaitGroup, and only then starts the second, so the increments never
// overlap.
//
// Ground truth: no atomicity violation.
package wgorder

import "sync"

// Counter is a count behind a mutex.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Inc adds one, in two critical sections.
func (c *Counter) Inc() {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}

// Twice increments on two goroutines, one after the other.
func (c *Counter) Twice() {
	for range 2 {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Inc()
		}()
		wg.Wait()
	}
}

// Value returns the count.
func (c *Counter) Value() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
