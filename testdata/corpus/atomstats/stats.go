// Package atomstats has the shape of a bug found in several Go caches:
// counters kept in a struct are updated with sync/atomic, and a getter
// returns the whole struct by value, reading every counter plainly.
//
// Ground truth: a data race between atomic.AddUint64 of c.stats.Writes
// and the plain read of c.stats; the static suite reports the read.
package atomstats

import "sync/atomic"

// Stats are a cache's counters.
type Stats struct {
	Writes, Reads uint64
}

// Cache counts its writes.
type Cache struct {
	stats Stats
}

// Put counts a write.
func (c *Cache) Put() { atomic.AddUint64(&c.stats.Writes, 1) }

// Stats returns the counters.
func (c *Cache) Stats() Stats { return c.stats }
