package ctor

import "sync"

// A constructor sets its object up through the helper its methods call
// with the lock held, before anything else can reach the object.
type Breaker struct {
	mu       sync.Mutex
	open     bool
	failures int
	gen      uint64
}

func New() *Breaker {
	b := new(Breaker)
	b.reset() // b is New's own
	return b
}

func NewLiteral() *Breaker {
	b := &Breaker{open: true}
	b.reset()
	return b
}

// newStarted lets the fresh object go on through a helper of its own.
func newStarted() *Breaker {
	b := new(Breaker)
	b.init()
	return b
}

func (b *Breaker) init() { b.reset() }

func (b *Breaker) reset() {
	b.gen++
	b.failures = 0
	if b.open {
		b.gen++
	}
}

func (b *Breaker) Fail() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures++
	if b.failures > 3 && !b.open {
		b.open = true
		b.reset()
	}
}

func (b *Breaker) Open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

func (b *Breaker) Gen() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gen
}

// Once the object is published, the helper's call needs the lock.
type Meter struct {
	mu    sync.Mutex
	count int
	total int
}

var current *Meter

func NewPublished() *Meter {
	m := new(Meter)
	current = m
	m.clear()
	return m
}

func NewWatched() *Meter {
	m := &Meter{}
	go m.watch()
	m.clear()
	return m
}

func (m *Meter) clear() {
	m.count = 0 // want `m.count is accessed without m.mu, which guards it \(held at 2 of its 3 accesses\)`
	m.total = 0 // want `m.total is accessed without m.mu, which guards it \(held at 2 of its 3 accesses\)`
}

func (m *Meter) watch() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count++
	m.total += m.count
}

func (m *Meter) Total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clear()
}

// A helper whose every call is on a fresh object runs as the
// constructor does.
type Pool struct {
	mu   sync.Mutex
	free []int
}

func NewPool(n int) *Pool {
	p := &Pool{}
	p.fill(n)
	return p
}

func (p *Pool) fill(n int) {
	for i := range n {
		p.free = append(p.free, i)
	}
}

func (p *Pool) Get() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	x := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return x
}

// A variable that a closure may point at another object holds no object
// of the function's own.
type Gauge struct {
	mu  sync.Mutex
	val int
}

func (g *Gauge) zero() {
	g.val = 0 // want `g.val is accessed without g.mu, which guards it \(held at 2 of its 3 accesses\)`
}

func (g *Gauge) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.zero()
}

func (g *Gauge) Inc() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.val++
}

func (g *Gauge) Get() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.val
}

func ZeroOther(other *Gauge) {
	x := new(Gauge)
	pick := func() { x = other }
	pick()
	x.zero()
}

// A cache holds its buckets by value in an array. A bucket's Init is
// exported by name but its type is not, and nothing exported leads to
// a bucket: only this package calls Init, and only on the buckets of a
// cache it is building. A Shard's Init, on an exported type, can be
// called by anyone, on a shard in use.
type bucket struct {
	mu     sync.Mutex
	chunks [][]byte
}

func (b *bucket) Init(n int) {
	b.chunks = make([][]byte, n)
}

func (b *bucket) set(i int, v []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i < len(b.chunks) {
		b.chunks[i] = v
	}
}

func (b *bucket) get(i int) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.chunks[i]
}

type Cache struct{ buckets [4]bucket }

func NewCache(n int) *Cache {
	var c Cache
	for i := range c.buckets {
		c.buckets[i].Init(n)
	}
	return &c
}

func (c *Cache) Set(i int, v []byte) { c.buckets[i%4].set(i, v) }

func (c *Cache) Get(i int) []byte { return c.buckets[i%4].get(i) }

type Shard struct {
	mu    sync.Mutex
	items []int
}

func (s *Shard) Init(n int) {
	s.items = make([]int, n) // want `s.items is accessed without s.mu, which guards it \(held at 2 of its 3 accesses\)`
}

func (s *Shard) Put(i, v int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < len(s.items) {
		s.items[i] = v
	}
}

type Ring struct{ shards [2]Shard }

func NewRing(n int) *Ring {
	var r Ring
	for i := range r.shards {
		r.shards[i].Init(n)
	}
	return &r
}
