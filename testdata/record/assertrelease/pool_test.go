package assertrelease

import (
	"sync"
	"testing"
)

func TestTakeRelease(t *testing.T) {
	p := &Pool{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				p.Take().Release()
			}
		}()
	}
	wg.Wait()
}
