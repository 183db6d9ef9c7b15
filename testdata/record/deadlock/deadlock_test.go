// Package deadlock blocks forever after a test has made a
// lost-update interleaving possible.
package deadlock

import (
	"sync"
	"testing"
)

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}

func TestDeadlock(t *testing.T) {
	c := &counter{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.inc()
		}()
	}
	wg.Wait()
	c.mu.Lock()
	c.mu.Lock() // all goroutines are asleep
}
