// Package maplen is a bounded cache that checks its size in one critical
// section and inserts in another, rendering the page in between without
// the lock: the check of len(c.pages) is stale by the time of the insert,
// and two Adds that both see room both insert, past the bound. The
// length of a map is a read of all its elements: the insert of any key
// changes it.
//
// Ground truth: real: R-W-W on the contents of c.pages (the length read
// by Full, an insert of another key, the insert).
package maplen

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
	c.pages[key] = page
	c.mu.Unlock()
	return true
}
