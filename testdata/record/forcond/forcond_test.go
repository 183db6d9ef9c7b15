package forcond

import "testing"

// TestRun runs four iterations, two of them left by continue: the
// condition is tested five times, the post statement runs four.
func TestRun(t *testing.T) {
	l := &Loop{limit: 4, step: 1}
	done := make(chan int)
	go func() { done <- l.Run() }()
	if got := <-done; got != 2 {
		t.Errorf("skipped %d, want 2", got)
	}
}
