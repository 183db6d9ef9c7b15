// Package loops checks state in one critical section and loops over it
// in another.
package loops

import (
	"sync"
	"time"
)

type Cache struct {
	mu      sync.Mutex
	buckets [4]map[string]int
	next    int
	done    chan struct{}
}

func (c *Cache) Remove(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(k)
}

func (c *Cache) remove(k string) {
	delete(c.buckets[c.next], k)
}

// Expire may wait without the lock, then takes it again: after the join,
// one critical section holds the loop and the removals in it, whichever
// way the wait went. The loop's end runs whatever the bucket held, so
// the bucket does not decide the update of c.next after it.
func (c *Cache) Expire(wait time.Duration) {
	c.mu.Lock()
	idx := c.next
	if wait > 0 {
		c.mu.Unlock()
		select {
		case <-time.After(wait):
		case <-c.done:
			return
		}
		c.mu.Lock()
	}
	for k := range c.buckets[idx] {
		c.remove(k)
	}
	c.next = (c.next + 1) % len(c.buckets)
	c.mu.Unlock()
}

type Stats struct {
	mu    sync.Mutex
	limit int
	seen  int
}

// Drain's loop bound comes from one critical section and the count it
// updates afterwards is read again in another: the loop's end does not
// depend on the bound.
func (s *Stats) Drain() {
	s.mu.Lock()
	n := s.limit
	s.mu.Unlock()
	for i := 0; i < n; i++ {
		time.Sleep(time.Millisecond)
	}
	s.mu.Lock()
	s.limit = 0
	s.mu.Unlock()
}

// Poll waits while the bound is zero, then takes one: the loop's
// condition is the check the take rests on.
func (s *Stats) Poll() {
	for {
		s.mu.Lock()
		n := s.limit // want `s.limit is checked in one critical section of s.mu and written in another; the check can be stale by the time of the write`
		s.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.mu.Lock()
	s.limit = s.limit - 1
	s.mu.Unlock()
}
