package pickerstatefix

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestUpdateInvoke has the balancer report a ready state with its picker
// while the application starts two RPCs, one after the other, logging
// each; the recorded run is serial (see package turn), so the RPCs see
// both.
func TestUpdateInvoke(t *testing.T) {
	cc := New()
	turn.Serial(
		func() { cc.UpdateBalancerState(Ready, NewPicker("10.0.0.1:443")) },
		func() {
			for range 2 {
				addr, err := cc.Invoke()
				t.Logf("RPC sent to %q, %v", addr, err)
			}
		},
	)
	if addr, err := cc.Invoke(); addr != "10.0.0.1:443" || err != nil {
		t.Errorf("RPC sent to %q, %v; want 10.0.0.1:443", addr, err)
	}
}
