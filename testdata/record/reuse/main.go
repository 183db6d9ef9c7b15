// Command reuse makes, closes and drops a channel, a sync.Once and a
// cancelled context in each round, collecting garbage between rounds, so
// that the runtime gives a new round's channels and Once the address of
// the previous round's: the recorder must see them as new objects.
package main

import (
	"context"
	"os"
	"runtime"
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

func round(c *counter) {
	done := make(chan struct{})
	once := new(sync.Once)
	go func() {
		once.Do(c.inc)
		close(done)
	}()
	<-done
	once.Do(c.inc)

	// The context package makes the Done channel, out of the probes' sight.
	// It makes it when Done is first called; asked for before the cancel
	// can run, it is a new channel that cancel closes, every round.
	ctx, cancel := context.WithCancel(context.Background())
	ctxDone := ctx.Done()
	go func() {
		c.inc()
		cancel()
	}()
	<-ctxDone
	c.inc()
}

func main() {
	rounds := 5
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			rounds = n
		}
	}
	c := &counter{}
	for range rounds {
		round(c)
		runtime.GC()
	}
	if c.n != 3*rounds {
		os.Exit(1)
	}
}
