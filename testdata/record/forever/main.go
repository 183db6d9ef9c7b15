// Command forever increments a counter from two goroutines and never
// stops: avcheck run must kill it at its -timeout.
package main

import "sync"

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
