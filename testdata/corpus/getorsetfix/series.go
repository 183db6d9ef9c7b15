// Package getorsetfix is package getorset fixed as
// prometheus/prometheus#18292 first fixed the Prometheus agent's
// getOrCreate race, after the head's setUnlessAlreadySet: the store looks
// the labels up again under the write lock and, if another appender
// stored the series meanwhile, returns that one and drops its own.
//
// Ground truth: no atomicity violation (double-checked locking with the
// re-check).
package getorsetfix

import (
	"sync"
	"sync/atomic"
)

// MemSeries is a series in memory.
type MemSeries struct {
	Ref  uint64
	Lset string
}

// Series indexes the series by their labels.
type Series struct {
	mtx     sync.RWMutex
	series  map[string]*MemSeries
	nextRef atomic.Uint64
	create  func(ref uint64, lset string) *MemSeries // builds a series: heavy
}

// New returns an empty index whose series create builds.
func New(create func(ref uint64, lset string) *MemSeries) *Series {
	return &Series{series: make(map[string]*MemSeries), create: create}
}

// GetOrCreate returns the series of lset, creating it if there is none,
// and whether it created it.
func (s *Series) GetOrCreate(lset string) (*MemSeries, bool) {
	s.mtx.RLock()
	ms, ok := s.series[lset]
	s.mtx.RUnlock()
	if ok {
		return ms, false
	}
	ms = s.create(s.nextRef.Add(1), lset)
	return s.setUnlessAlreadySet(lset, ms)
}

func (s *Series) setUnlessAlreadySet(lset string, ms *MemSeries) (*MemSeries, bool) {
	s.mtx.Lock()
	defer s.mtx.Unlock()
	if prev, ok := s.series[lset]; ok {
		return prev, false
	}
	s.series[lset] = ms
	return ms, true
}
