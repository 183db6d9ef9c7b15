// Package splitcounter is the split counter, the Go case avcheck starts
// from: every access holds the lock, so the race detector is silent, but
// Inc reads the count in one critical section and writes it in another,
// and an increment made in between is lost.
//
// Ground truth: a real atomicity violation on c.n (R-W-W).
package splitcounter

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

// Value returns the count.
func (c *Counter) Value() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
