// Package chanselect orders a worker's increment and the test's through
// messages sent and received in select statements.
package chanselect

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
