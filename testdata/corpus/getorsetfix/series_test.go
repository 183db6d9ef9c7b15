package getorsetfix

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestGetOrCreate appends a sample of one new series from two goroutines,
// each creating the series after handing the turn to the other (see
// package turn): both miss and both create it, but only the first store
// wins, and both get its series.
func TestGetOrCreate(t *testing.T) {
	s := turn.New(2)
	idx := New(func(ref uint64, lset string) *MemSeries {
		s.Yield(int(ref - 1))
		return &MemSeries{Ref: ref, Lset: lset}
	})
	var got [2]*MemSeries
	s.Run(func(g int) {
		if g == 0 {
			got[0], _ = idx.GetOrCreate(`{job="api"}`)
		} else {
			got[1], _ = idx.GetOrCreate(`{job="api"}`)
		}
	}, 0, 1, 0, 1)
	if got[0] != got[1] {
		t.Errorf("the goroutines got series %d and %d, want one", got[0].Ref, got[1].Ref)
	}
}
