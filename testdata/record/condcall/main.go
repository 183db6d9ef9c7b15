// Command condcall reads a variable in the conditions of an if and of two
// switches, through a call: each branch is taken after the read that
// decides it, so the recorders count it on the event after the call.
package main

import "sync"

type conn struct {
	mu    sync.Mutex
	state int
}

func (c *conn) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

func (c *conn) set(s int) {
	c.mu.Lock()
	c.state = s
	c.mu.Unlock()
}

func main() {
	c := &conn{}
	c.set(2)
	if c.get() != 2 {
		return
	}
	c.set(3)
	switch c.get() {
	case 3:
		c.set(4)
	}
	switch c.get() {
	case 1:
		c.set(0)
	}
	c.set(5)
}
