// Command pingpong passes a ball between two goroutines over unbuffered
// channels a number of times given as its argument, counting the passes
// in a split counter: the recorder's benchmark program for channels.
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
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			c.inc()
			pong <- v + 1
		}
		close(pong)
	}()
	for i := range times {
		ping <- i
		<-pong
		c.inc()
	}
	close(ping)
	<-pong
}
