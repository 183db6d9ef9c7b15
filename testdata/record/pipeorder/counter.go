// Package pipeorder splits an increment over two critical sections, and
// its test runs the two increments one after the other through a pipe of
// its own: a test that orders its goroutines itself, which no trace
// records, and which does not step aside when avcheck replays it.
package pipeorder

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
