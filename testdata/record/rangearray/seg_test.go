package rangearray

import (
	"sync"
	"testing"
)

func TestSegments(t *testing.T) {
	c := &Cache{}
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); i < 50; i++ {
				c.Set(i)
				_ = c.Len()
				c.Clear()
			}
		}()
	}
	wg.Wait()
}
