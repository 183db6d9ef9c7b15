// Package maplenfix is maplen fixed: Add checks the size again in the
// critical section that inserts, so that a stale check only costs a
// rendering.
//
// Ground truth: no violation (the re-check under the lock).
package maplenfix

import "sync"

// MaxPages bounds the pages a Cache holds.
const MaxPages = 2

// Cache is a bounded cache of rendered pages.
type Cache struct {
	mu     sync.Mutex
	pages  map[string]string
	render func(key string) string
}

// New returns a cache of pages that render renders.
func New(render func(key string) string) *Cache {
	return &Cache{pages: make(map[string]string), render: render}
}

// Full reports whether the cache holds MaxPages pages.
func (c *Cache) Full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pages) >= MaxPages
}

// Add renders the page of key and caches it, unless the cache is full.
func (c *Cache) Add(key string) bool {
	if c.Full() {
		return false
	}
	page := c.render(key) // slow: not under the lock
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pages) >= MaxPages {
		return false
	}
	c.pages[key] = page
	return true
}
