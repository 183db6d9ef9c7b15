// Package endless has a test that never ends: avcheck test must stop it
// when it is told to (SIGTERM).
package endless

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
	c.n++
	c.mu.Unlock()
}

func TestEndless(t *testing.T) {
	c := &counter{}
	for range 2 {
		go func() {
			for {
				c.inc()
			}
		}()
	}
	select {}
}
