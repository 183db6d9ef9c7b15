// Package mapcache is a map cache behind an RWMutex: Get looks the key up
// under the read lock and, on a miss, computes the value without a lock
// and stores it under the write lock. Two goroutines that miss the same
// key both compute it, and the second store overwrites the first: the
// first caller holds a value the cache no longer has.
//
// Ground truth: a real atomicity violation on c.m[key] (R-W-W: a miss and
// its store, interleaved by the other goroutine's store).
package mapcache

import (
	"context"
	"sync"
)

// Cache memoises compute.
type Cache struct {
	mu      sync.RWMutex
	m       map[string]int
	compute func(ctx context.Context, key string) int
}

// New returns an empty cache of compute's values.
func New(compute func(ctx context.Context, key string) int) *Cache {
	return &Cache{m: make(map[string]int), compute: compute}
}

// Get returns key's value, computing it on a miss.
func (c *Cache) Get(ctx context.Context, key string) int {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = c.compute(ctx, key)
	c.mu.Lock()
	c.m[key] = v
	c.mu.Unlock()
	return v
}
