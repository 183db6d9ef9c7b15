// Package wggo orders two updates of a counter with WaitGroup.Go: the
// reset follows the Wait that the task's end releases.
package wggo

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
