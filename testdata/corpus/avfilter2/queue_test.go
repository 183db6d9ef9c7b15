package avfilter2

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestFig2 records Fig. 2(a)'s instrumented execution: T1, then T2 (see
// package turn).
func TestFig2(t *testing.T) {
	s := New()
	turn.Serial(s.T1, s.T2)
	if s.item != 2 {
		t.Errorf("item = %d, want 2", s.item)
	}
}
