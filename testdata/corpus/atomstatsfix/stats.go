// Package atomstatsfix is package atomstats fixed: the getter loads each
// counter atomically.
//
// Ground truth: no race, no atomicity violation.
package atomstatsfix

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
func (c *Cache) Stats() Stats {
	return Stats{
		Writes: atomic.LoadUint64(&c.stats.Writes),
		Reads:  atomic.LoadUint64(&c.stats.Reads),
	}
}
