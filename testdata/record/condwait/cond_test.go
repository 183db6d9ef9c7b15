package condwait

import (
	"testing"
	"time"
)

// TestGate increments in a worker, between arming the gate and signalling
// it; the test waits for the signal, then resets the count. The worker
// sleeps first so that the test is already waiting when the signal comes.
func TestGate(t *testing.T) {
	c := &Counter{}
	g := NewGate()
	go func() {
		time.Sleep(300 * time.Millisecond)
		g.Arm()
		c.Add(1)
		g.Signal()
	}()
	g.Await()
	c.Reset()
	if c.n != 0 {
		t.Errorf("count %d, want 0", c.n)
	}
}
