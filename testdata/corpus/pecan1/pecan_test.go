package pecan1

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestFig1 records T1, then T2 (see package turn), so T1 does not reach
// the error in this run. (The paper's trace starts T2 first, <1,5,2,3,6,7>;
// the races are predicted from either order.)
func TestFig1(t *testing.T) {
	var s State
	var err error
	turn.Serial(func() { err = s.T1() }, s.T2)
	if err != nil {
		t.Error(err)
	}
}
