package acconnectfix

import (
	"sync/atomic"
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestConnectTwice has the balancer and a picker connect one addrConn
// from two goroutines, the first handing the turn to the second when it
// logs, after its check (see package turn): the second finds it
// connecting, and only the first dials.
func TestConnectTwice(t *testing.T) {
	s := turn.New(2)
	var logs, dials atomic.Int32
	ac := New(
		func() *Transport {
			dials.Add(1)
			return &Transport{Addr: "10.0.0.1:443"}
		},
		func(format string, args ...any) {
			if logs.Add(1) == 1 {
				s.Yield(0)
			}
		},
	)
	s.Run(func(int) { ac.Connect() }, 0, 1, 0)
	if got := dials.Load(); got != 1 {
		t.Errorf("%d dials, want 1", got)
	}
}
