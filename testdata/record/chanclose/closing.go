// Package chanclose orders two increments through a channel's close: the
// consumer's range loop ends only after the close.
package chanclose

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
