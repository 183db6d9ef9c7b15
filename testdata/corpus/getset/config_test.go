package getset

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestBump raises the limit from two goroutines; the recorded run is
// serial (see package turn).
func TestBump(t *testing.T) {
	var s Server
	turn.Serial(s.Bump, s.Bump)
	if got := s.Config().Limit; got != 2 {
		t.Errorf("limit %d, want 2", got)
	}
}
