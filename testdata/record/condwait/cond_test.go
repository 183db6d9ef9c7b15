package condwait

import (
	"testing"
	"time"
)

// TestGate adds in a worker and opens the gate; the test waits for the
// gate, then adds. The worker sleeps first so that the test is already
// waiting when the gate opens: the Wait is what orders the two.
func TestGate(t *testing.T) {
	var c Counter
	g := NewGate()
	go func() {
		time.Sleep(300 * time.Millisecond)
		c.Add(1)
		g.Open()
	}()
	g.Await()
	c.Add(2)
	if c.n != 3 {
		t.Errorf("count %d, want 3", c.n)
	}
}
