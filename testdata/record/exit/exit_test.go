// Package exit calls os.Exit at the end of a test that has already made a
// lost-update interleaving possible.
package exit

import (
	"os"
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

func TestExit(t *testing.T) {
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
	os.Exit(3)
}
