// Package ctorworker has the shape of a bug reported against etcd and
// Kubernetes code alike: a constructor's result is handed to a worker
// goroutine, and the function that built it goes on to read its state
// without the lock that every other access takes.
//
// Ground truth: a data race on t.pending (the read in Start against the
// worker's locked write); the static suite reports the unguarded read.
package ctorworker

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
// it sees at once, reading the count without the lock.
func Start(done chan<- struct{}) (*Tracker, int) {
	t := NewTracker()
	go func() {
		t.Add()
		close(done)
	}()
	return t, t.pending
}
