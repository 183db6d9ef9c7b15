package guard

import "sync"

type Cache struct {
	mu sync.Mutex
	m  map[string]int //avcheck:guardedby mu
	n  int
}

func NewCache() *Cache {
	c := &Cache{m: map[string]int{}}
	c.n = 0 // before the value is shared: not reported
	return c
}

func (c *Cache) Put(k string, v int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
	c.n++
}

func (c *Cache) Get(k string) int {
	c.mu.Lock()
	v := c.m[k]
	c.mu.Unlock()
	return v
}

func (c *Cache) Len() int {
	return len(c.m) // want `c.m is accessed without c.mu, which guards it \(//avcheck:guardedby\)`
}

func (c *Cache) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *Cache) Reset() {
	c.mu.Lock()
	c.n = 0
	c.mu.Unlock()
}

func (c *Cache) Peek() int {
	return c.n // want `c.n is accessed without c.mu, which guards it \(held at 3 of its 4 accesses\)`
}

// putLocked is called with c.mu held.
func (c *Cache) putLocked(k string) { c.m[k] = 1 }

type Stats struct {
	mu    sync.RWMutex
	Hits  int // want Hits:`guardedby\(mu, 3/4\)`
	other int
}

func (s *Stats) Hit() {
	s.mu.Lock()
	s.Hits++
	s.mu.Unlock()
}

func (s *Stats) Read() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.Hits
}

func (s *Stats) BadHit() {
	s.mu.RLock()
	s.Hits++ // want `s.Hits is written with only the read lock of s.mu held`
	s.mu.RUnlock()
}

func (s *Stats) Racy() int {
	return s.Hits // want `s.Hits is accessed without s.mu`
}

// other is never guarded: no guard is inferred, nothing is reported.
func (s *Stats) Other() int {
	s.other++
	return s.other
}

var (
	regMu    sync.Mutex
	registry = map[string]int{}
)

func Register(name string) {
	regMu.Lock()
	registry[name] = len(registry)
	regMu.Unlock()
}

func Lookup(name string) int {
	return registry[name] // want `registry is accessed without regMu, which guards it \(held at 2 of its 3 accesses\)`
}

type Pool struct {
	mu    sync.Mutex
	conns []int
	max   int
}

func (p *Pool) Get() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.grow()
	return p.conns[0]
}

func (p *Pool) Put(c int) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.trim()
	p.mu.Unlock()
}

// grow assumes p.mu is held: every call site holds it.
func (p *Pool) grow() {
	if len(p.conns) == 0 {
		p.conns = append(p.conns, 0)
	}
}

// trim is called with p.mu held, and calls shrink, which inherits it.
func (p *Pool) trim() {
	for len(p.conns) > 4 {
		p.shrink()
	}
}

func (p *Pool) shrink() { p.conns = p.conns[1:] }

// Drain has no caller here; an exported function is never assumed locked.
func (p *Pool) Drain() {
	p.conns = nil // want `p.conns is accessed without p.mu, which guards it \(held at \d+ of its \d+ accesses\)`
}

var (
	handlersMu sync.Mutex
	handlers   = map[int]int{}
)

func Watch(n int) {
	handlersMu.Lock()
	handlers[n]++
	handlersMu.Unlock()
}

func Count(n int) int {
	handlersMu.Lock()
	defer handlersMu.Unlock()
	return handlers[n]
}

// Cancel removes through a closure it calls with the lock held.
func Cancel(ns []int) {
	handlersMu.Lock()
	defer handlersMu.Unlock()
	remove := func(n int) {
		delete(handlers, n)
	}
	for _, n := range ns {
		remove(n)
	}
}

// Leak passes its closure on: who calls it, with what held, is unknown.
func Leak(run func(func())) {
	run(func() {
		handlers[0] = 1 // want `handlers\[0\] is accessed without handlersMu`
	})
}

// forEach calls fn for each handler, in its own goroutine, before it
// returns: a synchronous callback.
func forEach(fn func(k, v int)) {
	for i := 0; i < 3; i++ {
		fn(i, i)
	}
}

// later stores its callback to run it elsewhere.
var later []func()

func defer2(fn func()) { later = append(later, fn) }

// Sweep visits the handlers through a callback it runs with the lock.
func Sweep() {
	handlersMu.Lock()
	defer handlersMu.Unlock()
	forEach(func(k, v int) {
		handlers[k] = v
	})
}

// Postpone hands its closure to code that runs it after the lock is gone.
func Postpone() {
	handlersMu.Lock()
	defer handlersMu.Unlock()
	defer2(func() {
		handlers[1] = 2 // want `handlers\[1\] is accessed without handlersMu`
	})
}

// Mux is read through a helper that its only caller runs with the read
// lock held.
type Mux struct {
	mu sync.RWMutex
	m  map[string]int
	es []int
}

func (x *Mux) Handle(k string, v int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.m[k] = v
	x.es = append(x.es, v)
}

func (x *Mux) Delete(k string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.m, k)
}

func (x *Mux) Has(k string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	_, ok := x.m[k]
	return ok
}

func (x *Mux) Handler(k string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.match(k)
}

// match assumes x.mu is held, for reading at least.
func (x *Mux) match(k string) int {
	if v, ok := x.m[k]; ok {
		return v
	}
	for _, e := range x.es {
		return e
	}
	return 0
}

func (x *Mux) Reset() {
	x.mu.RLock()
	defer x.mu.RUnlock()
	x.clear()
}

// clear runs with only the read lock held, too little for a write.
func (x *Mux) clear() {
	x.es = nil // want `x.es is written with only the read lock of x.mu held`
}

// Len has no caller here: nothing is assumed held.
func (x *Mux) Len() int {
	return len(x.m) // want `x.m is accessed without x.mu, which guards it \(held at 5 of its 6 accesses\)`
}

// Client's Timeout is configuration, set before the value is shared, and
// its name is set only where the value is built: reads under c.mu are
// common, but no write holds it, so c.mu does not guard them.
type Client struct {
	mu      sync.Mutex
	idle    []int
	Timeout int
	name    string
}

func NewClient(name string) *Client { return &Client{name: name} }

// WithTimeout is an option applied to a Client before it is used.
func WithTimeout(d int) func(*Client) {
	return func(c *Client) { c.Timeout = d }
}

func (c *Client) Put(x int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) < c.Timeout {
		c.idle = append(c.idle, x)
	}
	println(c.name)
}

func (c *Client) Get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) == 0 || c.Timeout == 0 {
		return 0
	}
	x := c.idle[0]
	c.idle = c.idle[1:]
	println(c.name)
	return x
}

func (c *Client) Expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Timeout < 0 {
		c.idle = nil
	}
	println(c.name)
}

func (c *Client) Limit() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Timeout
}

// Clone copies the configuration without the lock.
func (c *Client) Clone() *Client {
	return &Client{Timeout: c.Timeout, name: c.name}
}

// Peek reads what the lock does guard.
func (c *Client) Peek() int {
	return len(c.idle) // want `c.idle is accessed without c.mu, which guards it \(held at 8 of its 9 accesses\)`
}

// Run's done flag is the package's own state, set without the lock that
// its readers take: the write is reported.
type Run struct {
	mu   sync.Mutex
	done bool
	logs []string
}

func (r *Run) Log(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		panic("log after the run")
	}
	r.logs = append(r.logs, s)
}

func (r *Run) Done() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *Run) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.logs = nil
	}
}

func (r *Run) finish() {
	r.done = true // want `r.done is accessed without r.mu, which guards it \(held at 3 of its 4 accesses\)`
}

// A stream's flags are processed under its state lock; the closure
// deferred after the deferred Unlock runs before it, with the lock held.
// One deferred before the Lock runs after the Unlock.
type Stream struct {
	stateLock sync.Mutex
	state     int
	timer     *int
}

func (s *Stream) processFlags(fin bool) {
	defer func() {
		if s.timer != nil { // want `s.timer is accessed without s.stateLock, which guards it \(held at 8 of its 9 accesses\)`
			s.state = 0 // want `s.state is accessed without s.stateLock, which guards it \(held at 2 of its 3 accesses\)`
		}
	}()
	s.stateLock.Lock()
	defer s.stateLock.Unlock()
	closing := false
	defer func() {
		if closing && s.timer != nil {
			s.timer = nil
		}
	}()
	if fin {
		s.state = 2
		closing = true
	}
}

func (s *Stream) setTimer(t *int) {
	s.stateLock.Lock()
	if s.timer != nil {
		*s.timer = 0
	}
	s.timer = t
	s.state = 1
	s.stateLock.Unlock()
}

func (s *Stream) stopTimer() {
	s.stateLock.Lock()
	defer s.stateLock.Unlock()
	if s.timer != nil {
		*s.timer = 0
		s.timer = nil
	}
}
