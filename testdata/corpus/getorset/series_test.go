package getorset

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestGetOrCreate appends a sample of one new series from two goroutines,
// each creating the series after handing the turn to the other (see
// package turn): both miss, and both create and store it.
func TestGetOrCreate(t *testing.T) {
	s := turn.New(2)
	idx := New(func(ref uint64, lset string) *MemSeries {
		s.Yield(int(ref - 1))
		return &MemSeries{Ref: ref, Lset: lset}
	})
	var created [2]bool
	s.Run(func(g int) {
		if g == 0 {
			_, created[0] = idx.GetOrCreate(`{job="api"}`)
		} else {
			_, created[1] = idx.GetOrCreate(`{job="api"}`)
		}
	}, 0, 1, 0, 1)
	if !created[0] || !created[1] {
		t.Errorf("created %v, want both in this run", created)
	}
}
