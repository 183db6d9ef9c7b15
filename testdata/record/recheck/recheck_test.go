package recheck

import "testing"

// TestOpen fails three times, then finds the circuit closed and opens it.
func TestOpen(t *testing.T) {
	b := &breaker{}
	done := make(chan bool)
	go func() {
		for range 3 {
			b.fail()
		}
		done <- b.isOpen()
	}()
	if !<-done {
		t.Error("closed after three failures")
	}
}
