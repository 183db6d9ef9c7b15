package constwrite

import (
	"os"
	"testing"
)

// TestPauseStop pauses, then stops from another goroutine that waits
// for a byte the test writes to a pipe once Pause returned: the recorded
// run pauses first, though nothing the trace records orders the two.
func TestPauseStop(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := New()
	stopped := make(chan struct{})
	go func() {
		var b [1]byte
		if _, err := r.Read(b[:]); err != nil {
			t.Error(err)
		}
		p.Stop()
		close(stopped)
	}()
	p.Pause(2)
	if _, err := w.Write([]byte{1}); err != nil {
		t.Error(err)
	}
	<-stopped
}
