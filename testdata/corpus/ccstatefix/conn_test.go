package ccstatefix

import (
	"errors"
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestCloseDuringReset has the monitor reset a failed transport while
// the application closes the connection and logs its state; the recorded
// run is serial (see package turn).
func TestCloseDuringReset(t *testing.T) {
	cc := New(func() error { return errors.New("connection refused") })
	turn.Serial(cc.ResetTransport, func() {
		cc.Close()
		t.Logf("closed, state %v", cc.State())
	})
	if got := cc.State(); got != Shutdown {
		t.Errorf("state %v, want Shutdown", got)
	}
}
