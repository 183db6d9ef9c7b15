package reg

import "sync"

type Counter struct {
	mu sync.Mutex
	n  int
	ch chan int
}

// Inc: a lock scope to the deferred unlock, with a summary.
func (c *Counter) Inc() { // want Inc:`summary\(read c.n \[lock c.mu\]; write c.n \[lock c.mu\]; takes c.mu\)`
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
}

// Get returns a value read under its own lock.
func (c *Counter) Get() int { // want Get:`summary\(read c.n \[lock c.mu\] ->result0; takes c.mu\)`
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Set writes its parameter under its own lock.
func (c *Counter) Set(v int) { // want Set:`summary\(write c.n \[lock c.mu\] <-params\[1\]; takes c.mu\)`
	c.mu.Lock()
	c.n = v
	c.mu.Unlock()
}

// Double: two calls, each its own critical section; a proximity region.
func Double(c *Counter) { // want Double:`summary\(read c.n \[lock c.mu\]; write c.n \[lock c.mu\]; takes c.mu\)`
	v := c.Get()
	c.Set(v * 2)
}

// lock and unlock are lock helpers.
func (c *Counter) lock() { c.mu.Lock() } // want lock:`summary\(takes c.mu; acquires c.mu\)`

func (c *Counter) unlock() { c.mu.Unlock() } // want unlock:`summary\(releases c.mu\)`

func (c *Counter) Helpers() { // want Helpers:`summary\(read c.n \[lock c.mu\]; write c.n \[lock c.mu\]; takes c.mu\)`
	c.lock()
	c.n += 2
	c.unlock()
}

type Pair struct {
	outer, inner sync.RWMutex
	a, b         int
}

// Nested: the inner scope belongs to the outer region.
func (p *Pair) Nested() { // want Nested:`summary\(read p.a \[lock p.outer\] \[rlock p.inner\]; write p.b \[lock p.outer\]; takes p.inner; takes p.outer\)`
	p.outer.Lock()
	p.inner.RLock()
	x := p.a
	p.inner.RUnlock()
	p.b = x
	p.outer.Unlock()
}

// Try holds the lock only where TryLock succeeded.
func (c *Counter) Try() bool { // want Try:`summary\(write c.n \[lock c.mu\]; takes c.mu\)`
	if c.mu.TryLock() {
		c.n = 1
		c.mu.Unlock()
		return true
	}
	return false
}

var total, count int

// Split: a channel send ends the first proximity region.
func (c *Counter) Split(v int) { // want Split:`summary\(read total; write total <-params\[1\]; read count; write count; read c.ch\)`
	total += v
	count++
	c.ch <- v
	total -= v
}

//avcheck:atomic
func Annotated(c *Counter) { // want Annotated:`summary\(read total; write c.n\)`
	c.n = total
}

func Block(c *Counter) { // want Block:`summary\(write total; write c.n; write count\)`
	total = 0
	//avcheck:atomic
	{
		c.n = 1
		count = 2
	}
}

// Closure: the literal's accesses are its own function's.
func Closure(c *Counter) func() {
	return func() {
		c.n = 3
	}
}

type Config struct {
	mu   sync.RWMutex
	keys []int
}

// initRLocked upgrades its read lock and returns holding it again.
func (c *Config) initRLocked() { // want initRLocked:`summary\(write c.keys \[lock c.mu\]; takes c.mu\)`
	c.mu.RUnlock()
	defer c.mu.RLock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = nil
}

// IncThenGet calls two methods that each take their own lock: adjacent,
// so proximity proposes a region, but nothing read flows anywhere, so
// nothing confirms it.
func IncThenGet(c *Counter) { // want IncThenGet:`summary\(read c.n \[lock c.mu\]; write c.n \[lock c.mu\]; takes c.mu\)`
	for i := 0; i < 3; i++ {
		c.Inc()
		_ = c.Get()
	}
}

// CheckThenSet: the value read decides whether the write runs.
func CheckThenSet(c *Counter) { // want CheckThenSet:`summary\(read c.n \[lock c.mu\]; write c.n \[lock c.mu\]; takes c.mu\)`
	if c.Get() == 0 {
		c.Set(1)
	}
}

// Span: the value read at the first line is used together with the one
// read at the second.
func (p *Pair) Span() int { // want Span:`summary\(read p.a \[lock p.outer\] ->result0; read p.b \[lock p.outer\] ->result0; takes p.outer\)`
	p.outer.Lock()
	lo := p.a
	p.outer.Unlock()
	p.outer.Lock()
	hi := p.b
	p.outer.Unlock()
	return hi - lo
}

// Logged only passes the two values on to a call: no evidence.
func (p *Pair) Logged(log func(...any)) { // want Logged:`summary\(read p.a; read p.b; calls param1\)`
	lo := p.a
	hi := p.b
	log(lo, hi)
}

// Relock takes the lock with a deferred unlock, releases it to wait for
// a notification, and takes it again: two critical sections, the first
// ending at its explicit Unlock or at the early return, the second at
// the end, and the wait between them in neither.
func (c *Counter) Relock(ch chan struct{}) int { // want Relock:`summary\(read c.n \[lock c.mu\] ->result0; takes c.mu\)`
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n > 0 {
		return c.n
	}
	c.mu.Unlock()
	<-ch
	c.mu.Lock()
	return c.n
}

// Assert resets the counter only on its way to a panic: the value read
// decides a write on a failure path, which is an assertion, not a
// check-then-act. CheckThenSet's shape with an ordinary act stays
// evidence.
func Assert(c *Counter) { // want Assert:`summary\(read c.n \[lock c.mu\]; write c.n \[lock c.mu\]; takes c.mu\)`
	if c.Get() != 1 {
		c.Set(0)
		panic("not one")
	}
}

// Stack is a linked stack behind a mutex.
type Stack struct {
	mu  sync.Mutex
	top *node
}

type node struct {
	v    int
	next *node
}

// Push reads the top in one critical section and, in another, stores a
// new node that holds it: the value read is written back, inside the
// node that the write publishes.
func (s *Stack) Push(v int) { // want Push:`summary\(read s.top \[lock s.mu\]; write s.top \[lock s.mu\] <-params\[1\]; takes s.mu\)`
	s.mu.Lock()
	top := s.top
	s.mu.Unlock()
	n := &node{v: v, next: top}
	s.mu.Lock()
	s.top = n
	s.mu.Unlock()
}

// Replace only logs the node it reads, and stores a node made of v
// alone: nothing read reaches the write.
func (s *Stack) Replace(v int, log func(...any)) { // want Replace:`summary\(read s.top \[lock s.mu\]; write s.top \[lock s.mu\] <-params\[1\]; takes s.mu; calls param2\)`
	s.mu.Lock()
	old := s.top
	s.mu.Unlock()
	log(old)
	n := &node{v: v}
	s.mu.Lock()
	s.top = n
	s.mu.Unlock()
}

// Gauge keeps how long it has run.
type Gauge struct {
	mu    sync.Mutex
	start int
	age   int
}

func (g *Gauge) elapsed() int { return 42 - g.start } // want elapsed:`summary\(read g.start ->result0\)`

// Tick stores a number computed from the gauge's fields: passing the
// gauge's pointer to elapsed gives a result made of what it points to,
// not of the pointer, so no parameter's value is written.
func (g *Gauge) Tick() { // want Tick:`summary\(read g.start \[lock g.mu\]; write g.age \[lock g.mu\]; takes g.mu\)`
	g.mu.Lock()
	g.age = g.elapsed()
	g.mu.Unlock()
}

// SetA changes p.a, which Nested and Span read: the pair's state is not
// fixed at construction.
func (p *Pair) SetA(v int) { // want SetA:`summary\(write p.a \[lock p.outer\] <-params\[1\]; takes p.outer\)`
	p.outer.Lock()
	p.a = v
	p.outer.Unlock()
}

// Loader's load is set only while it is built (NewLoader, through
// setup): every goroutine reads the same value there.
type Loader struct {
	mu   sync.Mutex
	load func(int) int
	n    int
}

func NewLoader(f func(int) int) *Loader { // want NewLoader:`summary\(\)`
	l := &Loader{}
	setup(l, f)
	return l
}

func setup(l *Loader, f func(int) int) { l.load = f } // want setup:`summary\(write l.load <-params\[1\]\)`

// Get checks the fixed field, then updates n in two critical sections
// with nothing read in the first reaching the second: the check decides
// nothing another goroutine could change, so it is no evidence.
func (l *Loader) Get(k int) int { // want Get:`summary\(read l.load; read l.n \[lock l.mu\] ->result0; write l.n \[lock l.mu\] <-params\[1\]; takes l.mu\)`
	if l.load == nil {
		return 0
	}
	l.mu.Lock()
	n := l.n
	l.mu.Unlock()
	l.mu.Lock()
	l.n = k
	l.mu.Unlock()
	return n
}

// Swapper's load is changed by SetLoad on an object already shared.
type Swapper struct {
	mu   sync.Mutex
	load func(int) int
	n    int
}

func (s *Swapper) SetLoad(f func(int) int) { // want SetLoad:`summary\(write s.load \[lock s.mu\] <-params\[1\]; takes s.mu\)`
	s.mu.Lock()
	s.load = f
	s.mu.Unlock()
}

// Get: the same shape as Loader.Get, whose check, of state that can
// change, decides whether the update runs (check-then-act).
func (s *Swapper) Get(k int) int { // want Get:`summary\(read s.load \[lock s.mu\]; write s.n \[lock s.mu\] <-params\[1\]; takes s.mu\)`
	s.mu.Lock()
	load := s.load
	s.mu.Unlock()
	if load == nil {
		return 0
	}
	s.mu.Lock()
	s.n = k
	s.mu.Unlock()
	return 0
}

// Tally adds what Get returns to total, and later counts the Set: each
// update of total is one of its own, so nothing links the Set to the
// Get, and the region is the first line's alone.
func Tally(c *Counter) { // want Tally:`summary\(read c.n \[lock c.mu\]; read total; write total; write c.n \[lock c.mu\]; takes c.mu\)`
	total += c.Get()
	c.Set(1)
	total++
}

// Memo's m is set only by NewMemo, but what the map holds changes: a
// check of an element decides the write of it (check-then-act).
type Memo struct {
	mu sync.Mutex
	m  map[int]int
}

func NewMemo() *Memo { return &Memo{m: map[int]int{}} } // want NewMemo:`summary\(\)`

func (c *Memo) Get(k int) int { // want Get:`summary\(read c.m \[lock c.mu\] ->result0; read c.m\[\] \[lock c.mu\] ->result0; write c.m\[\] \[lock c.mu\] <-params\[1\]; takes c.mu\)`
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	c.mu.Lock()
	c.m[k] = 1
	c.mu.Unlock()
	return 1
}

// defaultCap keeps the value its package's initialization gave it;
// maxCap is changed by SetMaxCap.
var (
	defaultCap = 8
	maxCap     = 8
)

func SetMaxCap(n int) { maxCap = n } // want SetMaxCap:`summary\(write maxCap <-params\[0\]\)`

// CapFixed checks defaultCap, then updates c.n in two critical sections
// with nothing read in the first reaching the second: the check decides
// nothing another goroutine could change, so it is no evidence.
func CapFixed(c *Counter, k int) int { // want CapFixed:`summary\(read defaultCap; read c.n \[lock c.mu\] ->result0; write c.n \[lock c.mu\] <-params\[1\]; takes c.mu\)`
	if k > defaultCap {
		return 0
	}
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = k
	c.mu.Unlock()
	return n
}

// CapMax: the same shape as CapFixed, whose check, of a variable that
// can change, decides whether the update runs (check-then-act).
func CapMax(c *Counter, k int) int { // want CapMax:`summary\(read maxCap; read c.n \[lock c.mu\] ->result0; write c.n \[lock c.mu\] <-params\[1\]; takes c.mu\)`
	if k > maxCap {
		return 0
	}
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = k
	c.mu.Unlock()
	return n
}
