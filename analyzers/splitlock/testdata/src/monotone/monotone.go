// Package monotone checks a counter in one critical section and updates
// it in another.
package monotone

import "sync"

type Conn struct {
	mu      sync.Mutex
	pending int
	limit   int
	inUse   int
}

func Dial() *Conn {
	c := &Conn{limit: 4}
	go c.readLoop()
	return c
}

// Send may run in any goroutine: it only adds to pending.
func (c *Conn) Send() {
	c.mu.Lock()
	c.pending++
	c.mu.Unlock()
}

// readLoop alone takes away from pending; Sends in between only add, so
// the check that it is not zero stays true.
func (c *Conn) readLoop() {
	for {
		c.mu.Lock()
		if c.pending == 0 {
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		read()
		c.mu.Lock()
		c.pending--
		c.mu.Unlock()
	}
}

// Acquire checks the limit, then adds: another Acquire in between also
// adds, and both can pass the limit.
func (c *Conn) Acquire() bool {
	c.mu.Lock()
	if c.inUse >= c.limit { // want `c.inUse is checked in one critical section of c.mu and written in another; the check can be stale by the time of the write`
		c.mu.Unlock()
		return false
	}
	c.mu.Unlock()
	c.mu.Lock()
	c.inUse++
	c.mu.Unlock()
	return true
}

func (c *Conn) Release() {
	c.mu.Lock()
	c.inUse--
	c.mu.Unlock()
}

type Pool struct {
	mu      sync.Mutex
	pending int
}

// Start runs two drainers: each one's check can be made stale by the
// other's decrement.
func Start() *Pool {
	p := &Pool{}
	for range 2 {
		go p.drain()
	}
	return p
}

func (p *Pool) Add() {
	p.mu.Lock()
	p.pending++
	p.mu.Unlock()
}

func (p *Pool) drain() {
	for {
		p.mu.Lock()
		n := p.pending // want `p.pending is checked in one critical section of p.mu and written in another; the check can be stale by the time of the write`
		p.mu.Unlock()
		if n == 0 {
			return
		}
		read()
		p.mu.Lock()
		p.pending--
		p.mu.Unlock()
	}
}

func read() {}
