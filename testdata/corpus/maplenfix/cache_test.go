package maplenfix

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestAddBoth adds two pages from two goroutines, the renderer handing
// the turn to the other goroutine while it renders (see package turn):
// both find room before either inserts.
func TestAddBoth(t *testing.T) {
	s := turn.New(2)
	c := New(func(key string) string {
		if key == "a" {
			s.Yield(0)
		} else {
			s.Yield(1)
		}
		return "<html>" + key + "</html>"
	})
	var added [2]bool
	s.Run(func(g int) {
		added[g] = c.Add([]string{"a", "b"}[g])
	}, 0, 1, 0, 1)
	if !added[0] || !added[1] {
		t.Errorf("added %v, want both", added)
	}
}
