package chanselect

import "testing"

// TestSelect sends a request and waits for its acknowledgement in select
// statements; the worker adds between the two.
func TestSelect(t *testing.T) {
	var c Counter
	req := make(chan int)
	ack := make(chan int, 1)
	quit := make(chan struct{}) // never ready: it makes each select a real one
	go func() {
		var d int
		select {
		case d = <-req:
		case <-quit:
			return
		}
		c.Add(d)
		select {
		case ack <- d:
		case <-quit:
		}
	}()
	select {
	case req <- 1:
	case <-quit:
	}
	select {
	case <-ack:
	case <-quit:
	}
	c.Add(2)
	if c.n != 3 {
		t.Errorf("count %d, want 3", c.n)
	}
}
