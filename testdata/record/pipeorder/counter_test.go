package pipeorder

import (
	"os"
	"sync"
	"testing"
)

// TestInc increments from two goroutines, the second waiting for a byte
// the first writes to a pipe when it is done: the recorded run is
// serial, and so is every run of the program.
func TestInc(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var c Counter
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.Inc()
		if _, err := w.Write([]byte{1}); err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		var b [1]byte
		if _, err := r.Read(b[:]); err != nil {
			t.Error(err)
		}
		c.Inc()
	}()
	wg.Wait()
}
