package atomstats

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestStats reads the counters, then counts a write, in another goroutine;
// the recorded run is serial (see package turn).
func TestStats(t *testing.T) {
	var c Cache
	var s Stats
	turn.Serial(func() { s = c.Stats() }, c.Put)
	if s.Writes > 1 {
		t.Fatalf("writes %d", s.Writes)
	}
}
