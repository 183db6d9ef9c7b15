// Package penaltyfix is package penalty fixed as
// kubernetes-sigs/kueue#12697 fixed Kueue's lost admission fair sharing
// penalties: the synchronised map merges a delta into the stored value in
// one critical section. The scheduler and the workload controller each
// update the penalty and then peek at it for their logs, two calls one
// after the other whose second only logs.
//
// Ground truth: no atomicity violation.
package penaltyfix

import "sync"

// SyncMap is a map behind a lock.
type SyncMap struct {
	mu sync.RWMutex
	m  map[string]int64
}

// NewSyncMap returns an empty map.
func NewSyncMap() *SyncMap {
	return &SyncMap{m: make(map[string]int64)}
}

// Get returns the value of k.
func (s *SyncMap) Get(k string) (int64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[k]
	return v, ok
}

// Add adds d to the value of k.
func (s *SyncMap) Add(k string, d int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] += d
}

// EntryPenalties holds the penalties of the local queues, in millicores.
type EntryPenalties struct {
	penalties *SyncMap
	logf      func(format string, args ...any)
}

// NewEntryPenalties returns no penalties, logging with logf.
func NewEntryPenalties(logf func(format string, args ...any)) *EntryPenalties {
	return &EntryPenalties{penalties: NewSyncMap(), logf: logf}
}

// Push adds p to the penalty of the local queue lq.
func (e *EntryPenalties) Push(lq string, p int64) {
	e.penalties.Add(lq, p)
	e.logf("entry penalty of %s now %d", lq, e.Peek(lq))
}

// Sub subtracts p from the penalty of the local queue lq.
func (e *EntryPenalties) Sub(lq string, p int64) {
	e.penalties.Add(lq, -p)
	e.logf("entry penalty of %s now %d", lq, e.Peek(lq))
}

// Peek returns the penalty of the local queue lq.
func (e *EntryPenalties) Peek(lq string) int64 {
	v, _ := e.penalties.Get(lq)
	return v
}
