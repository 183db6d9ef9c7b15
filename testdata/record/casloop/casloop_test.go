package casloop

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestRetry makes the test's first try fail: between its load and its
// CompareAndSwap, the other goroutine adds its own 1.
func TestRetry(t *testing.T) {
	var c Counter
	var stage atomic.Int32
	done := make(chan struct{})
	go func() {
		for stage.Load() != 1 {
			runtime.Gosched()
		}
		c.Add(1, nil)
		stage.Store(2)
		close(done)
	}()
	first := true
	c.Add(1, func() {
		if first {
			first = false
			stage.Store(1)
			for stage.Load() != 2 {
				runtime.Gosched()
			}
		}
	})
	<-done
	if n := c.Count(); n != 2 {
		t.Errorf("count %d, want 2", n)
	}
}
