// Package chantoken passes a token over an unbuffered channel: the second
// increment starts only after the first one has finished, so the split
// increment cannot lose an update.
package chantoken

import "sync"

// Counter is a count behind a mutex.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Inc reads and writes the count in two critical sections.
func (c *Counter) Inc() {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}
