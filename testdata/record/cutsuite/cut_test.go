// Package cutsuite has a long serial test, which a small -max-events
// cuts, before a test with a lost update and another long test, and a
// parallel test that waits for them: the recording reaches the long test
// only.
package cutsuite

import (
	"sync"
	"testing"
)

var (
	mu   sync.Mutex
	n    int
	hits int
)

func TestWaits(t *testing.T) {
	t.Parallel()
	mu.Lock()
	hits++
	mu.Unlock()
}

func TestLong(t *testing.T) {
	for range 20000 {
		mu.Lock()
		hits++
		mu.Unlock()
	}
}

func inc() {
	mu.Lock()
	v := n
	mu.Unlock()
	mu.Lock()
	n = v + 1
	mu.Unlock()
}

func TestLost(t *testing.T) {
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inc()
		}()
	}
	wg.Wait()
}

// TestLongToo is as long as TestLong: a second recording that reaches it
// is cut too, before the parallel test goes on.
func TestLongToo(t *testing.T) {
	TestLong(t)
}
