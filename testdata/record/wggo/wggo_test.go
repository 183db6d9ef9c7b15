package wggo

import (
	"sync"
	"testing"
)

// TestGo adds in a task started by WaitGroup.Go, waits for it, and
// resets the count.
func TestGo(t *testing.T) {
	c := &Counter{}
	var wg sync.WaitGroup
	wg.Go(func() {
		c.Add(1)
	})
	wg.Wait()
	c.Reset()
	if c.n != 0 {
		t.Errorf("count %d, want 0", c.n)
	}
}
