package penalty

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestPushSub has the scheduler push a penalty while the workload
// controller subtracts another one of the same queue; the recorded run is
// serial (see package turn), so neither is lost.
func TestPushSub(t *testing.T) {
	e := NewEntryPenalties()
	e.Push("team-a/lq", 500)
	turn.Serial(
		func() { e.Push("team-a/lq", 300) },
		func() { e.Sub("team-a/lq", 500) },
	)
	if got := e.Peek("team-a/lq"); got != 300 {
		t.Errorf("penalty %d, want 300", got)
	}
}
