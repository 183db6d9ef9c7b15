package token

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestInc increments from two goroutines; the recorded run is serial (see
// package turn).
func TestInc(t *testing.T) {
	c := New()
	turn.Serial(c.Inc, c.Inc)
	if got := c.Value(); got != 2 {
		t.Errorf("count %d, want 2", got)
	}
}
