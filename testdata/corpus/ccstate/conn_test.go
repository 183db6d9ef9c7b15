package ccstate

import (
	"errors"
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestCloseDuringReset has the monitor reset a failed transport while
// the application closes the connection; the recorded run is serial (see
// package turn), so the connection ends shut down.
func TestCloseDuringReset(t *testing.T) {
	cc := New(func() error { return errors.New("connection refused") })
	turn.Serial(cc.ResetTransport, cc.Close)
	if got := cc.State(); got != Shutdown {
		t.Errorf("state %v, want Shutdown", got)
	}
}
