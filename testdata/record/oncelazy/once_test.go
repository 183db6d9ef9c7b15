package oncelazy

import (
	"sync"
	"testing"
)

// TestLimit reads the limit from two goroutines.
func TestLimit(t *testing.T) {
	var c Config
	var wg sync.WaitGroup
	got := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = c.Limit()
		}()
	}
	wg.Wait()
	if got[0] != 20 || got[1] != 20 {
		t.Errorf("limits %v, want [20 20]", got)
	}
}
