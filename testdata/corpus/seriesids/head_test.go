package seriesids

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestCommit commits a new series from each of two appenders; the
// recorded run is serial (see package turn), so each reference names its
// own series.
func TestCommit(t *testing.T) {
	h := &Head{}
	a, b := h.Appender(), h.Appender()
	a.Add(`{job="api"}`)
	b.Add(`{job="db"}`)
	var ra, rb []uint64
	turn.Serial(
		func() { ra = a.Commit() },
		func() { rb = b.Commit() },
	)
	if h.Series(ra[0]) != `{job="api"}` || h.Series(rb[0]) != `{job="db"}` {
		t.Errorf("references %v and %v name %q and %q", ra, rb, h.Series(ra[0]), h.Series(rb[0]))
	}
}
