package blanktouch

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestSetHealthy replaces the configuration on one goroutine and checks
// the server's health on another; the recorded run is serial (see
// package turn).
func TestSetHealthy(t *testing.T) {
	ok := false
	turn.Serial(
		func() { Set(&Config{Addr: ":9090"}) },
		func() { ok = Healthy() },
	)
	if !ok {
		t.Error("not healthy")
	}
}
