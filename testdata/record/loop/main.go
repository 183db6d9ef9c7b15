// Command loop increments a split counter from two goroutines a number of
// times given as its argument: the recorder's benchmark program.
package main

import (
	"os"
	"strconv"
	"sync"
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

func main() {
	times := 100
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			times = n
		}
	}
	c := &counter{}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range times {
				c.inc()
			}
		}()
	}
	wg.Wait()
}
