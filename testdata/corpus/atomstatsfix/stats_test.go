package atomstatsfix

import (
	"sync"
	"testing"
)

func TestStats(t *testing.T) {
	var c Cache
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.Put()
	}()
	s := c.Stats()
	wg.Wait()
	if s.Writes > 1 {
		t.Fatalf("writes %d", s.Writes)
	}
}
