package atom001

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestRelease has the two holders of an object release it; the recorded
// run is serial (see package turn), so the object is freed once.
func TestRelease(t *testing.T) {
	o := &Object{refs: 2}
	turn.Serial(o.Release, o.Release)
	if o.frees != 1 {
		t.Errorf("freed %d times, want once", o.frees)
	}
}
