package atom002

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestWrite has two goroutines log an entry each; the recorded run is
// serial (see package turn), so both entries are kept.
func TestWrite(t *testing.T) {
	var l Log
	turn.Serial(func() { l.Write("GET /a") }, func() { l.Write("GET /b") })
	if got := l.Entries(); len(got) != 2 {
		t.Errorf("entries %q, want two", got)
	}
}
