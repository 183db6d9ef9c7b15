// Package getset is a getter/setter read-modify-write: Config and
// SetConfig each hold the lock, but Bump calls one and then the other, so
// another goroutine's update made between them is overwritten.
//
// Ground truth: a real atomicity violation on s.cfg (R-W-W through the
// getter and the setter).
package getset

import "sync"

// Config is a server's limits.
type Config struct {
	Limit int
}

// Server holds its configuration behind a mutex.
type Server struct {
	mu  sync.Mutex
	cfg Config
}

// Config returns the configuration.
func (s *Server) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// SetConfig replaces the configuration.
func (s *Server) SetConfig(c Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = c
}

// Bump raises the limit by one: a read through the getter and a write
// through the setter, meant as one step.
func (s *Server) Bump() {
	c := s.Config()
	c.Limit++
	s.SetConfig(c)
}
