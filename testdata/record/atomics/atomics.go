// Package atomics publishes a value with an atomic flag and counts with
// both forms of sync/atomic: the function and the typed method.
package atomics

import "sync/atomic"

// Stats counts hits.
type Stats struct {
	hits  int64
	calls atomic.Int64
	ready atomic.Bool
	data  int
}

// Hit counts one call and one hit.
func (s *Stats) Hit() {
	atomic.AddInt64(&s.hits, 1)
	s.calls.Add(1)
}

// Publish writes the data and then raises the flag.
func (s *Stats) Publish(v int) {
	s.data = v
	s.data += 1
	s.ready.Store(true)
}

// Consume waits for the flag, then updates the data.
func (s *Stats) Consume() int {
	for !s.ready.Load() {
	}
	s.data *= 2
	return s.data
}

// Totals returns the counts and clears the data. (The loads are recorded
// at the goroutine's next stop, after they returned: the write is one.)
func (s *Stats) Totals() (hits, calls int64) {
	hits, calls = atomic.LoadInt64(&s.hits), s.calls.Load()
	s.data = 0
	return hits, calls
}
