// Package penalty is modelled on Kueue's lost admission fair sharing
// penalties (kubernetes-sigs/kueue#12546, fixed by
// kubernetes-sigs/kueue#12697): the entry penalties of local queues live
// in a synchronised map, each of whose methods is one critical section.
// The scheduler pushed a penalty when it assumed a workload, and the
// workload controller subtracted one when a workload's usage was
// accounted, each by reading the queue's penalty with one call and
// storing the sum with another. Concurrent updates of one queue read the
// same value and the second store overwrites the first: a penalty is
// lost, and the queue is favoured.
//
// Ground truth: a real atomicity violation on s.m[lq] (R-W-W: a Get and
// its Set, interleaved by the other goroutine's Set).
package penalty

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

// Set sets the value of k.
func (s *SyncMap) Set(k string, v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
}

// EntryPenalties holds the penalties of the local queues, in millicores.
type EntryPenalties struct {
	penalties *SyncMap
}

// NewEntryPenalties returns no penalties.
func NewEntryPenalties() *EntryPenalties {
	return &EntryPenalties{penalties: NewSyncMap()}
}

// Push adds p to the penalty of the local queue lq.
func (e *EntryPenalties) Push(lq string, p int64) {
	old, _ := e.penalties.Get(lq)
	e.penalties.Set(lq, old+p)
}

// Sub subtracts p from the penalty of the local queue lq.
func (e *EntryPenalties) Sub(lq string, p int64) {
	old, _ := e.penalties.Get(lq)
	e.penalties.Set(lq, old-p)
}

// Peek returns the penalty of the local queue lq.
func (e *EntryPenalties) Peek(lq string) int64 {
	v, _ := e.penalties.Get(lq)
	return v
}
