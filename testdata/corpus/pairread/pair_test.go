package pairread

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestWidth moves the range in one goroutine and measures it in another,
// one after the other: the recorded width is right.
func TestWidth(t *testing.T) {
	r := &Range{lo: 0, hi: 10}
	var w int
	turn.Serial(func() { r.Move(5) }, func() { w = r.Width() })
	if w != 10 {
		t.Errorf("width %d, want 10", w)
	}
}
