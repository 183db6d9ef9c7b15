// Package oncelazy starts a service once with sync.Once: every other
// starter's Do returns after the one that ran the start.
package oncelazy

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

// Service counts its starts.
type Service struct {
	once   sync.Once
	starts Counter
}

// Start starts the service on the first call; it reports whether this
// call did.
func (s *Service) Start() (first bool) {
	s.once.Do(func() {
		s.starts.Add(1)
		first = true
	})
	return first
}
