package bankav

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// run has n goroutines each move 10 from account i to account i+1 (mod
// n), once: every account sees one withdrawal and one deposit. The
// recorded run is serial, goroutine 0 first (see package turn).
func run(t *testing.T, n int) {
	b := New(n)
	var bodies []func()
	for i := range n {
		bodies = append(bodies, func() { b.Transfer(i, (i+1)%n, 10) })
	}
	turn.Serial(bodies...)
	if got := b.Total(); got != 100*n {
		t.Errorf("total %d, want %d", got, 100*n)
	}
}

func TestBank2(t *testing.T) { run(t, 2) }

func TestBank8(t *testing.T) { run(t, 8) }
