// Package pairread is a pair of fields published in two critical
// sections and read together in two: a range's bounds are moved by one
// goroutine while another reads them, so the reader can pair the old
// low bound with the new high one.
//
// Ground truth: a real atomicity violation on r.lo and r.hi (an
// atomic-set violation: the reader's two reads are split by the writer's
// two writes).
package pairread

import "sync"

// Range is an interval whose bounds are read and written under one lock,
// each on its own.
type Range struct {
	mu     sync.Mutex
	lo, hi int
}

// Lo returns the low bound.
func (r *Range) Lo() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lo
}

// Hi returns the high bound.
func (r *Range) Hi() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hi
}

// SetLo sets the low bound.
func (r *Range) SetLo(v int) {
	r.mu.Lock()
	r.lo = v
	r.mu.Unlock()
}

// SetHi sets the high bound.
func (r *Range) SetHi(v int) {
	r.mu.Lock()
	r.hi = v
	r.mu.Unlock()
}

// Move shifts the interval by d.
func (r *Range) Move(d int) {
	r.SetLo(r.Lo() + d)
	r.SetHi(r.Hi() + d)
}

// Width returns hi - lo, reading the bounds in two steps.
func (r *Range) Width() int {
	lo := r.Lo()
	hi := r.Hi()
	return hi - lo
}
