// Package getorset is modelled on the Prometheus agent's getOrCreate race
// (prometheus/prometheus#18292, "tsdb/agent: fix getOrCreate race"): to
// append a sample, the agent looked its series up by labels under the
// stripe's read lock and, on a miss, created the series outside the lock
// (creation is heavy, and lock hold times matter at startup) and stored
// it under the write lock without looking again. Two appenders of a new
// series both miss, both create it, and the second store replaces the
// first: samples written with the first series' reference refer to a
// series that is no longer there.
//
// Ground truth: a real atomicity violation on s.series[lset] (R-W-W: a
// miss and its store, interleaved by the other appender's store).
package getorset

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
	s.mtx.Lock()
	s.series[lset] = ms
	s.mtx.Unlock()
	return ms, true
}
