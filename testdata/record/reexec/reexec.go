// Package reexec has a test that starts copies of its own test binary,
// as tests of servers and commands do: the copies must not write into
// the recording of the process that avcheck started.
package reexec

import "sync"

// Counter is a count behind a mutex.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Add adds d to the count.
func (c *Counter) Add(d int) {
	c.mu.Lock()
	c.n += d
	c.mu.Unlock()
}
