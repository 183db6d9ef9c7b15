package split

import "sync"

type Counter struct {
	mu sync.Mutex
	n  int
	m  int
}

func (c *Counter) Inc() {
	c.mu.Lock()
	n := c.n // want `c.n is read and written in two critical sections of c.mu; the update can be lost`
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}

// IncOK holds the lock across the read and the write.
func (c *Counter) IncOK() {
	c.mu.Lock()
	n := c.n
	c.n = n + 1
	c.mu.Unlock()
}

// IncDefer holds the lock to the end of the function.
func (c *Counter) IncDefer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = n + 1
}

// NoFlow writes a value that does not come from the read.
func (c *Counter) NoFlow() int {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = 0
	c.mu.Unlock()
	return n
}

// Different state: read c.n, write c.m.
func (c *Counter) Different() {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.m = n
	c.mu.Unlock()
}

// CheckThenAct decides the write on a stale check.
func (c *Counter) CheckThenAct() {
	c.mu.Lock()
	zero := c.n == 0 // want `c.n is checked in one critical section of c.mu and written in another`
	c.mu.Unlock()
	if zero {
		c.mu.Lock()
		c.n = 10
		c.mu.Unlock()
	}
}

// Rechecked re-validates under the second critical section.
func (c *Counter) Rechecked() {
	c.mu.Lock()
	zero := c.n == 0
	c.mu.Unlock()
	if zero {
		c.mu.Lock()
		if c.n == 0 {
			c.n = 10
		}
		c.mu.Unlock()
	}
}

type RW struct {
	mu sync.RWMutex
	v  int
}

func (r *RW) Bump() {
	r.mu.RLock()
	v := r.v // want `r.v is read and written in two critical sections of r.mu`
	r.mu.RUnlock()
	r.mu.Lock()
	r.v = v * 2
	r.mu.Unlock()
}

type Nested struct {
	outer, inner sync.Mutex
	x            int
}

// Outer holds the outer lock across both inner critical sections.
func (n *Nested) Outer() {
	n.outer.Lock()
	n.inner.Lock()
	x := n.x
	n.inner.Unlock()
	n.inner.Lock()
	n.x = x + 1
	n.inner.Unlock()
	n.outer.Unlock()
}

// TryInc uses TryLock's success branch.
func (c *Counter) TryInc() {
	if !c.mu.TryLock() {
		return
	}
	n := c.n // want `c.n is read and written in two critical sections of c.mu`
	c.mu.Unlock()
	if c.mu.TryLock() {
		c.n = n + 1
		c.mu.Unlock()
	}
}

var (
	gmu   sync.Mutex
	total int
)

func AddTotal(d int) {
	gmu.Lock()
	t := total // want `total is read and written in two critical sections of gmu`
	gmu.Unlock()
	gmu.Lock()
	total = t + d
	gmu.Unlock()
}

// Closure: the goroutine's body splits the update of a captured variable.
func Closure() {
	var mu sync.Mutex
	count := 0
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			n := count // want `count is read and written in two critical sections of mu`
			mu.Unlock()
			mu.Lock()
			count = n + 1
			mu.Unlock()
		}()
	}
	wg.Wait()
}

type Inner struct {
	sync.Mutex
	hits int
}

type Outer struct {
	Inner
}

// Embedded: the promoted Lock and field of an embedded struct.
func (o *Outer) Hit() {
	o.Lock()
	h := o.hits // want `o.Inner.hits is read and written in two critical sections of o.Inner.Mutex`
	o.Unlock()
	o.Lock()
	o.hits = h + 1
	o.Unlock()
}

//avcheck:ignore the caller serialises Inc calls
func (c *Counter) Ignored() {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}

func (c *Counter) IgnoredLine() {
	c.mu.Lock()
	n := c.n //avcheck:ignore
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}

type Conn struct {
	mu       sync.Mutex
	err      error
	lastBody *int
}

// NamedResult: the error read under the first critical section is
// returned on one path; the write of the second comes from another value
// held in the same named result on a different path.
func (c *Conn) NamedResult(read func() error) (err error) {
	c.mu.Lock()
	if c.err != nil {
		defer c.mu.Unlock()
		return c.err
	}
	c.mu.Unlock()
	err = read()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.err = err
	}
	return err
}

type node struct{ next *node }

type FreeList struct {
	mu   sync.Mutex
	free *node
}

func (l *FreeList) get() *node {
	l.mu.Lock()
	n := l.free
	if n != nil {
		l.free = n.next
	} else {
		n = new(node)
	}
	l.mu.Unlock()
	return n
}

func (l *FreeList) put(n *node) {
	l.mu.Lock()
	n.next = l.free
	l.free = n
	l.mu.Unlock()
}

// Recycle takes a node and gives it back: the push reads the current
// head, so nothing is lost.
func (l *FreeList) Recycle() {
	n := l.get()
	l.put(n)
}

func (l *FreeList) pop() *node {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.free
	if n != nil {
		l.free = n.next
	}
	return n
}

// Reuse checks the node it popped and pushes it back: the pop updated the
// list in the critical section of the check.
func (l *FreeList) Reuse() {
	if n := l.pop(); n != nil {
		l.put(n)
	}
}
