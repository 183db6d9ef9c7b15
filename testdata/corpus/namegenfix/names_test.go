package namegenfix

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestCreate creates two containers from two goroutines, the first
// handing the turn to the second while it sets its container up (see
// package turn): the second reserves the name first, and the first
// creation fails.
func TestCreate(t *testing.T) {
	s := turn.New(2)
	d := &Daemon{
		Names:    NewRegistry(),
		Generate: func() string { return "eager_turing" },
		Setup: func(id string) error {
			if id == "c0" {
				s.Yield(0)
			}
			return nil
		},
		Logf: t.Logf,
	}
	var errs [2]error
	s.Run(func(g int) {
		if g == 0 {
			_, errs[0] = d.Create("c0")
		} else {
			_, errs[1] = d.Create("c1")
		}
	}, 0, 1, 0)
	if errs[0] != ErrNameTaken || errs[1] != nil {
		t.Fatalf("errors %v, want [%v <nil>]", errs, ErrNameTaken)
	}
	if got := d.Names.Get("eager_turing"); got != "c1" {
		t.Errorf("eager_turing names %q, want c1", got)
	}
}
