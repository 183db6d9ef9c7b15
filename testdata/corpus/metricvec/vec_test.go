package metricvec

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestHandlers has two request handlers count two requests each and log
// the count after each; the recorded run is serial (see package turn).
func TestHandlers(t *testing.T) {
	requests := NewCounterVec()
	handle := func() {
		for range 2 {
			c := requests.WithLabelValues("GET", "200")
			c.Inc()
			t.Logf("requests: %v", c.Value())
		}
	}
	turn.Serial(handle, handle)
	if got := requests.WithLabelValues("GET", "200").Value(); got != 4 {
		t.Errorf("%v requests, want 4", got)
	}
}
