//go:build avcheck_tagged

package tagged

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
