package pickerstate

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestUpdateInvoke has the balancer report a ready state with its picker
// while the application starts an RPC; the recorded run is serial (see
// package turn), so the RPC sees both.
func TestUpdateInvoke(t *testing.T) {
	cc := New()
	var addr string
	var err error
	turn.Serial(
		func() { cc.UpdateBalancerState(Ready, NewPicker("10.0.0.1:443")) },
		func() { addr, err = cc.Invoke() },
	)
	if addr != "10.0.0.1:443" || err != nil {
		t.Errorf("RPC sent to %q, %v; want 10.0.0.1:443", addr, err)
	}
}
