// Package chanbuffered orders two increments through a buffered channel's
// capacity: the third send on a channel of capacity 2 completes only after
// the first receive.
package chanbuffered

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
