package atomics

import (
	"sync"
	"testing"
)

// TestPublish counts from two goroutines, publishes from one and
// consumes in the test.
func TestPublish(t *testing.T) {
	s := &Stats{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Hit()
		}()
	}
	go s.Publish(20)
	got := s.Consume()
	wg.Wait()
	hits, calls := s.Totals()
	if got != 42 || hits != 2 || calls != 2 {
		t.Errorf("got %d, hits %d, calls %d; want 42, 2, 2", got, hits, calls)
	}
}
