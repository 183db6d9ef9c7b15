package owner

import "sync"

// Conn's read loop owns timer and seen: it alone writes them, under mu
// for the readers of other goroutines, and reads them itself without mu.
type Conn struct {
	mu    sync.Mutex
	wmu   sync.Mutex
	timer int
	seen  bool
	size  int
	limit int
	max   int
}

func Dial() *Conn {
	c := &Conn{}
	go c.readLoop()
	return c
}

func (c *Conn) readLoop() {
	defer c.cleanup()
	for c.frame() {
	}
}

func (c *Conn) frame() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = true
	c.size++
	c.limit = c.size
	c.max = c.size * 2
	return c.size < 10
}

func (c *Conn) cleanup() {
	if c.timer != 0 { // the owner's own read: not reported
		c.timer = 0
	}
	if !c.seen { // not reported
		return
	}
	c.mu.Lock()
	c.timer = 1
	c.mu.Unlock()
}

func (c *Conn) Seen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen && c.timer != 0
}

func (c *Conn) Timer() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timer
}

// Size reads size with wmu, which every write of it holds too: not
// reported. Limit is written with wmu too, but Peek holds neither lock.
func (c *Conn) Size() int {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.size
}

func (c *Conn) Limit() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit
}

func (c *Conn) Peek() int {
	return c.limit // want `c.limit is accessed without c.mu, which guards it \(held at 2 of its 3 accesses\)`
}

// Pool's workers are started in a loop: several run work at once, and
// its unlocked read of n races with the others' writes.
type Pool struct {
	mu sync.Mutex
	n  int
}

func Start(k int) *Pool {
	p := &Pool{}
	for range k {
		go p.work()
	}
	return p
}

func (p *Pool) work() {
	if p.n > 3 { // want `p.n is accessed without p.mu, which guards it \(held at 2 of its 3 accesses\)`
		return
	}
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}

func (p *Pool) N() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// max is written with both locks held, and read mostly with mu, which is
// inferred as its guard; MaxW reads it with wmu, which also excludes
// every writer: not reported.
func (c *Conn) MaxA() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max
}

func (c *Conn) MaxB() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.max + 1
}

func (c *Conn) MaxW() int {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.max
}
