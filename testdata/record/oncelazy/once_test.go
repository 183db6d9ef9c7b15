package oncelazy

import (
	"sync"
	"testing"
)

// TestStart starts the service from two goroutines; the one that did not
// start it resets the count, after the start.
func TestStart(t *testing.T) {
	s := &Service{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !s.Start() {
				s.starts.Reset()
			}
		}()
	}
	wg.Wait()
	if s.starts.n != 0 {
		t.Errorf("count %d, want 0", s.starts.n)
	}
}
