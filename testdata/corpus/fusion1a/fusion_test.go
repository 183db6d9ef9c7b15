package fusion1a

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestFig1a records the paper's trace t1 t2 t3 t4 t5: T1, then T2 (see
// package turn).
func TestFig1a(t *testing.T) {
	var s State
	turn.Serial(s.T1, s.T2)
	if s.x != 5 {
		t.Errorf("x = %d, want 5", s.x)
	}
}
