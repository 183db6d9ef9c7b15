// Command lockerlock updates two counters from two goroutines, each under
// a mutex taken through a sync.Locker (a sync.Cond's L, and a Locker
// variable): hits in one critical section, so no goroutine can interleave
// it; total in two, so one update can be lost.
package main

import "sync"

type counter struct {
	mu    sync.Mutex
	cond  *sync.Cond
	hits  int
	total int
}

func (c *counter) hit() {
	c.cond.L.Lock()
	c.hits++
	c.cond.L.Unlock()
}

func (c *counter) add(n int) {
	var l sync.Locker = &c.mu
	l.Lock()
	v := c.total
	l.Unlock()
	l.Lock()
	c.total = v + n
	l.Unlock()
}

func main() {
	c := &counter{}
	c.cond = sync.NewCond(&c.mu)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.hit()
			c.add(1)
		}()
	}
	wg.Wait()
}
