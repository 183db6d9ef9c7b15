package lazyinit

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestLookupSerial looks up two names from two goroutines; the recorded
// run is serial (see package turn), so the second lookup finds the table
// loaded and never stores it.
func TestLookupSerial(t *testing.T) {
	r := &Registry{load: func(string) map[string]int { return map[string]int{"a": 1, "b": 2} }}
	turn.Serial(
		func() { r.Lookup("a") },
		func() { r.Lookup("b") },
	)
}

// TestLookupBoth looks up two names from two goroutines, the loader
// handing the turn to the other goroutine while it loads (see package
// turn): both find the table unset and both load and store it.
func TestLookupBoth(t *testing.T) {
	s := turn.New(2)
	r := &Registry{load: func(name string) map[string]int {
		if name == "a" {
			s.Yield(0)
		} else {
			s.Yield(1)
		}
		return map[string]int{"a": 1, "b": 2}
	}}
	s.Run(func(g int) {
		if g == 0 {
			r.Lookup("a")
		} else {
			r.Lookup("b")
		}
	}, 0, 1, 0, 1)
}
