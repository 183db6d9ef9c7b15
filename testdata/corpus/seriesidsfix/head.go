// Package seriesidsfix is package seriesids fixed: the appender numbers
// its new series from the number of series it reads under the write lock
// it appends them with, in one critical section.
//
// Ground truth: no atomicity violation.
package seriesidsfix

import "sync"

// Head holds the series of the head block, a series' reference being its
// index.
type Head struct {
	mtx    sync.RWMutex
	series []string
}

// Series returns the labels of the series with reference ref.
func (h *Head) Series(ref uint64) string {
	h.mtx.RLock()
	defer h.mtx.RUnlock()
	return h.series[ref]
}

// Appender stages new series and commits them to the head.
type Appender struct {
	head      *Head
	newSeries []string
}

// Appender returns an appender to h.
func (h *Head) Appender() *Appender {
	return &Appender{head: h}
}

// Add stages a new series.
func (a *Appender) Add(lset string) {
	a.newSeries = append(a.newSeries, lset)
}

// Commit creates the staged series and returns their references, in the
// order they were added.
func (a *Appender) Commit() []uint64 {
	refs := make([]uint64, len(a.newSeries))
	a.head.mtx.Lock()
	defer a.head.mtx.Unlock()
	base := len(a.head.series)
	for i := range refs {
		refs[i] = uint64(base + i)
	}
	a.head.series = append(a.head.series, a.newSeries...)
	return refs
}
