package wgorder

import "testing"

func TestTwice(t *testing.T) {
	var c Counter
	c.Twice()
	if got := c.Value(); got != 2 {
		t.Errorf("count %d, want 2", got)
	}
}
