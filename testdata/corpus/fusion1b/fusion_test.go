package fusion1b

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestFig1b records the paper's trace t1 t2 t3 t4 t5: T1, then T2 (see
// package turn), so T2 finds the signal already given.
func TestFig1b(t *testing.T) {
	s := New()
	turn.Serial(s.T1, s.T2)
	if s.a != 2 || s.x != 3 {
		t.Errorf("a = %d, x = %d, want 2 and 3", s.a, s.x)
	}
}
