// Package oncelazy initialises a value lazily with sync.Once: every
// reader's Do returns after the one that ran the initialisation.
package oncelazy

import "sync"

// Config is loaded on first use.
type Config struct {
	once  sync.Once
	limit int
}

// Limit returns the limit, loading it on the first call.
func (c *Config) Limit() int {
	c.once.Do(func() {
		c.limit = 10
		c.limit *= 2
	})
	return c.limit
}
