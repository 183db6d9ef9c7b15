package lazyclientfix

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestClientConfig asks for the configuration from two goroutines; the
// recorded run is serial (see package turn), so the first loads it and the
// second finds it loaded.
func TestClientConfig(t *testing.T) {
	loads := 0
	c := New(func() *ClientConfig {
		loads++
		return &ClientConfig{Host: "https://10.0.0.1:6443"}
	})
	var got [2]*ClientConfig
	turn.Serial(
		func() { got[0] = c.ClientConfig() },
		func() { got[1] = c.ClientConfig() },
	)
	if loads != 1 || got[0] != got[1] {
		t.Errorf("%d loads, configurations %p and %p; want one load", loads, got[0], got[1])
	}
}
