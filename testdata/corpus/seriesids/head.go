// Package seriesids is modelled on the Prometheus TSDB series-creation
// race of prometheus-junkyard/tsdb#95 (for prometheus/prometheus#2795,
// "unknown series reference" on WAL replay): on commit, an appender read
// the number of series under the head's read lock to number its new
// series from there, released it, and appended them under the write lock.
// Two appenders that commit at once both number from the same base: the
// references they handed out point at each other's series.
//
// Ground truth: a real atomicity violation on h.series (the base read
// and the append, interleaved by the other appender's append: R-W-W, and
// R-W-R between the two reads).
package seriesids

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
	a.head.mtx.RLock()
	base := len(a.head.series)
	a.head.mtx.RUnlock()

	refs := make([]uint64, len(a.newSeries))
	for i := range refs {
		refs[i] = uint64(base + i)
	}

	a.head.mtx.Lock()
	a.head.series = append(a.head.series, a.newSeries...)
	a.head.mtx.Unlock()
	return refs
}
