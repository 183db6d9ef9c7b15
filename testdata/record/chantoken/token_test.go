package chantoken

import "testing"

// TestToken increments in a goroutine, hands the token over, and
// increments again once it has it.
func TestToken(t *testing.T) {
	var c Counter
	token := make(chan struct{})
	go func() {
		c.Inc()
		token <- struct{}{}
	}()
	<-token
	c.Inc()
	if c.n != 2 {
		t.Errorf("count %d, want 2", c.n)
	}
}
