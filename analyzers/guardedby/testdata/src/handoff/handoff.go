package handoff

import "sync"

// Conn's worker goroutine writes err under mu, then closes done; Wait
// receives from done and reads err without mu: the close orders the
// write before the read, so the read is not reported.
type Conn struct {
	mu    sync.Mutex
	err   error
	state int
	done  chan struct{}
	ping  chan struct{}
}

func (c *Conn) run() {
	c.mu.Lock()
	c.err = work()
	c.state = 1
	c.mu.Unlock()
	close(c.done)
}

func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Conn) State() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

func (c *Conn) SetState(s int) {
	c.mu.Lock()
	c.state = s
	c.mu.Unlock()
}

func Started() *Conn {
	c := &Conn{done: make(chan struct{})}
	go c.run()
	return c
}

func (c *Conn) Wait() error {
	<-c.done
	return c.err // handed off through done: not reported
}

// Polled receives too, but from ping, which no writer of state signals
// on: the receive orders nothing, and the read is reported.
func (c *Conn) Polled() int {
	<-c.ping
	return c.state // want `c.state is accessed without c.mu, which guards it \(held at 4 of its 5 accesses\)`
}

func work() error { return nil }

// state reads c.state for callers that hold c.mu; a test calls it too,
// without the lock, where the state is quiet: that call does not make
// the read unguarded.
func (c *Conn) stateOf() int { return c.state }

func (c *Conn) StateLocked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stateOf()
}
