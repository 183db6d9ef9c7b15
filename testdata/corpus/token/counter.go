// Package token is the split counter of package splitcounter made safe by
// a channel token: a goroutine takes the one token from a channel before
// it increments and puts it back after, so increments never overlap; the
// mutex inside Inc is now redundant.
//
// Ground truth: no atomicity violation.
package token

import "sync"

// Counter is a count behind a mutex, incremented by token holders.
type Counter struct {
	mu  sync.Mutex
	n   int
	tok chan struct{}
}

// New returns a counter with its token available.
func New() *Counter {
	c := &Counter{tok: make(chan struct{}, 1)}
	c.tok <- struct{}{}
	return c
}

// Inc adds one while holding the token.
func (c *Counter) Inc() {
	<-c.tok
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
	c.tok <- struct{}{}
}

// Value returns the count.
func (c *Counter) Value() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
