package counter

import (
	"sync"
	"testing"
)

// TestInc increments from two goroutines. Recorded serially or not, the
// trace admits the interleaving that loses an increment.
func TestInc(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Inc()
		}()
	}
	wg.Wait()
}
