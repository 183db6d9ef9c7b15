//go:build avcheck_tagged

package tagged

import (
	"sync"
	"testing"
)

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
