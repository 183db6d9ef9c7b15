package jigsaw

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestNextEvent has two goroutines take the two queued events; the
// recorded run is serial (see package turn), so each takes a different
// one.
func TestNextEvent(t *testing.T) {
	var m EventManager
	m.queue.Add("a")
	m.queue.Add("b")
	var got [2]string
	turn.Serial(
		func() { got[0] = m.NextEvent() },
		func() { got[1] = m.NextEvent() },
	)
	if got != [2]string{"a", "b"} {
		t.Errorf("took %q, want a then b", got)
	}
}
