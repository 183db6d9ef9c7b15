// Package ctorworkerfix is package ctorworker fixed: Start reads the
// count through Pending, with the lock.
//
// Ground truth: no race, no atomicity violation.
package ctorworkerfix

import "sync"

// Tracker counts pending work.
type Tracker struct {
	mu      sync.Mutex
	pending int
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{} }

// Add counts one more pending item.
func (t *Tracker) Add() {
	t.mu.Lock()
	t.pending++
	t.mu.Unlock()
}

// Pending returns the count.
func (t *Tracker) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

// Start hands a new tracker to a worker that adds to it, and reports what
// it sees at once.
func Start(done chan<- struct{}) (*Tracker, int) {
	t := NewTracker()
	go func() {
		t.Add()
		close(done)
	}()
	return t, t.Pending()
}
