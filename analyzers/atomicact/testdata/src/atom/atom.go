package atom

import (
	"sync"
	"sync/atomic"
)

const (
	idle int32 = iota
	running
)

type Server struct {
	state int32 // want state:`atomic\(atomic.Load at atom.go:\d+\)`
	n     atomic.Int64
	hits  int64 // want hits:`atomic\(atomic.Add at atom.go:\d+\)`
	Count int64 // want Count:`atomic\(atomic.Add at atom.go:\d+\)`
}

func (s *Server) Start() {
	if atomic.LoadInt32(&s.state) == idle { // want `the atomic load of s.state decides a later atomic Store of it; another goroutine can change it in between: use CompareAndSwap`
		atomic.StoreInt32(&s.state, running)
	}
}

// StartCAS is the fix.
func (s *Server) StartCAS() bool {
	return atomic.CompareAndSwapInt32(&s.state, idle, running)
}

func (s *Server) Bump() {
	v := s.n.Load() // want `the atomic load of s.n computes a later atomic Store of it`
	s.n.Store(v + 1)
}

// BumpCAS is the CompareAndSwap loop.
func (s *Server) BumpCAS() {
	for {
		v := s.n.Load()
		if s.n.CompareAndSwap(v, v+1) {
			return
		}
	}
}

// Unrelated: the load does not decide the store.
func (s *Server) Unrelated() int64 {
	v := s.n.Load()
	s.n.Store(0)
	return v
}

type Once struct {
	done atomic.Uint32
	m    sync.Mutex
}

// Do is double-checked: the store is re-checked under the mutex.
func (o *Once) Do(f func()) {
	if o.done.Load() == 0 {
		o.doSlow(f)
	}
}

func (o *Once) doSlow(f func()) {
	o.m.Lock()
	defer o.m.Unlock()
	if o.done.Load() == 0 {
		defer o.done.Store(1)
		f()
	}
}

func (s *Server) Hit() {
	atomic.AddInt64(&s.hits, 1)
	atomic.AddInt64(&s.Count, 1)
}

func (s *Server) Hits() int64 {
	return s.hits // want `s.hits is read plainly here but accessed atomically elsewhere \(atomic.Add at atom.go:\d+\); the plain access races with the atomic ones`
}

func (s *Server) Reset() {
	s.hits = 0 // want `s.hits is written plainly here but accessed atomically elsewhere`
}

// NewServer builds the value before it is shared.
func NewServer() *Server {
	s := &Server{}
	s.hits = 1
	return s
}

var mu sync.Mutex

// LockedRead reads under a lock that the writers are assumed to hold.
func (s *Server) LockedRead() int64 {
	mu.Lock()
	defer mu.Unlock()
	return s.hits
}

type Value struct {
	typ  atomic.Pointer[int]
	data atomic.Pointer[int]
}

var firstStore int

// Store claims the first store with a CompareAndSwap before storing.
func (v *Value) Store(x *int) {
	for {
		typ := v.typ.Load()
		if typ == nil {
			if !v.typ.CompareAndSwap(nil, &firstStore) {
				continue
			}
			v.data.Store(x)
			v.typ.Store(x)
			return
		}
		v.data.Store(x)
		return
	}
}

var unsupported atomic.Bool

// Sticky: the flag is checked, and set much later under its own
// condition; setting it twice is harmless.
func Sticky(try func() error) error {
	if unsupported.Load() {
		return nil
	}
	err := try()
	if err != nil {
		unsupported.Store(true)
	}
	return err
}

// Recursive types must not send the analyzer into a loop.
type Tree []Tree

type Holder struct {
	t    Tree
	arr  [4]atomic.Int32
	flag int32
}

func (h *Holder) Walk() int {
	n := len(h.t)
	for i := range h.arr {
		n += int(h.arr[i].Load())
	}
	return n
}

var ready int32 // want ready:`atomic\(atomic.Load at atom.go:\d+\)`

// init runs before any goroutine that could interleave exists.
func init() {
	ready = 1
	if atomic.LoadInt32(&ready) == 1 {
		atomic.StoreInt32(&ready, 2)
	}
}

func Ready() bool { return atomic.LoadInt32(&ready) == 2 }

func Unready() {
	ready = 0 // want `ready is written plainly here but accessed atomically elsewhere`
}

// Again, once ready has been set, is an ordinary function.
func Again() {
	if atomic.LoadInt32(&ready) == 0 { // want `the atomic load of ready decides a later atomic Store of it`
		atomic.StoreInt32(&ready, 1)
	}
}

type Group struct {
	state atomic.Uint64
}

// Done resets the state after a sanity check that panics on misuse: the
// store does not depend on the load but on the Add before it.
func (g *Group) Done() {
	state := g.state.Add(^uint64(0))
	if state != 0 {
		return
	}
	if g.state.Load() != state {
		panic("misuse: Done called concurrently with Add")
	}
	g.state.Store(0)
}

// Reset acts on what it loaded: the other side of the check panics only
// sometimes, so the check is a decision, not an assertion.
func (g *Group) Reset(strict bool) {
	if g.state.Load() == 0 { // want `the atomic load of g.state decides a later atomic Store of it`
		if strict {
			panic("already reset")
		}
		return
	}
	g.state.Store(0)
}

// Counters added atomically, read plainly with the struct that holds them.
type stats struct{ writes, reads uint64 } // want writes:`atomic\(atomic.Add at atom.go:\d+\)`

type store struct {
	st   stats
	name string
}

func (s *store) put() { atomic.AddUint64(&s.st.writes, 1) }

func (s *store) stats() stats {
	return s.st // want `s.st is read plainly here, and with it its field writes, which is accessed atomically elsewhere \(atomic.Add at atom.go:\d+\)`
}

func (s *store) title() string { return s.name } // a sibling, not a holder: not reported

func (s *store) statsFixed() stats {
	return stats{writes: atomic.LoadUint64(&s.st.writes)}
}

// A struct that holds a mutex, reset with a plain assignment: the
// mutex's own atomic state is not data of the struct.
type shard struct {
	mu    sync.Mutex
	items map[string]int
}

type groupOfShards struct {
	main shard
}

func (g *groupOfShards) get(k string) int {
	g.main.mu.Lock()
	defer g.main.mu.Unlock()
	return g.main.items[k]
}

func (g *groupOfShards) reset() {
	g.main = shard{}
}

// A counter drained by taking away what was loaded: an Add in between is
// kept.
type ewma struct{ uncounted int64 } // want uncounted:`atomic\(atomic.Add at atom.go:\d+\)`

func (e *ewma) Update(n int64) { atomic.AddInt64(&e.uncounted, n) }

func (e *ewma) drain() int64 {
	n := atomic.LoadInt64(&e.uncounted)
	atomic.AddInt64(&e.uncounted, -n)
	return n
}

// A limit checked, then added to: two adders can both pass.
func (e *ewma) reserve(limit int64) bool {
	if atomic.LoadInt64(&e.uncounted) >= limit { // want `the atomic load of e.uncounted decides a later atomic Add of it`
		return false
	}
	atomic.AddInt64(&e.uncounted, 1)
	return true
}

var total int64 // want total:`atomic\(atomic.Add at atom.go:\d+\)`

// The workers add atomically; the sum is read plainly once they are done.
func sumAll(n int) int64 {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			atomic.AddInt64(&total, 1)
		}()
	}
	wg.Wait()
	return total
}

// Read while the workers may still be adding.
func sumEarly(n int) int64 {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			atomic.AddInt64(&total, 1)
		}()
	}
	t := total // want `total is read plainly here but accessed atomically elsewhere \(atomic.Add at atom.go:\d+\)`
	wg.Wait()
	return t
}

// A meter adds to its live snapshot atomically and hands out copies,
// which are read plainly.
type MeterSnapshot struct{ count int64 } // want count:`atomic\(atomic.Add at atom.go:\d+\)`

func (s *MeterSnapshot) Count() int64 { return s.count }

type Meter struct{ snapshot *MeterSnapshot }

func NewMeter() *Meter { return &Meter{snapshot: &MeterSnapshot{}} }

func (m *Meter) Mark(n int64) { atomic.AddInt64(&m.snapshot.count, n) }

func (m *Meter) Snapshot() *MeterSnapshot {
	return &MeterSnapshot{count: atomic.LoadInt64(&m.snapshot.count)}
}

// A gauge hands out its live snapshot: its plain reads are of the
// instance added to atomically.
type GaugeSnapshot struct{ value int64 } // want value:`atomic\(atomic.Add at atom.go:\d+\)`

func (s *GaugeSnapshot) Value() int64 {
	return s.value // want `s.value is read plainly here but accessed atomically elsewhere \(atomic.Add at atom.go:\d+\)`
}

type Gauge struct{ live *GaugeSnapshot }

func (g *Gauge) Add(n int64) { atomic.AddInt64(&g.live.value, n) }

func (g *Gauge) Live() *GaugeSnapshot { return g.live }

// A rate stored atomically, for readers that take no lock, and updated
// only under the mutex: the helper's load and store are one step.
type ewmaRate struct {
	mu   sync.Mutex
	rate uint64 // want rate:`atomic\(atomic.Load at atom.go:\d+\)`
}

func (e *ewmaRate) Rate() uint64 { return atomic.LoadUint64(&e.rate) }

func (e *ewmaRate) Tick(d uint64) {
	e.mu.Lock()
	e.update(d)
	e.mu.Unlock()
}

func (e *ewmaRate) Reset() {
	e.mu.Lock()
	atomic.StoreUint64(&e.rate, 0)
	e.mu.Unlock()
}

// update runs with e.mu held: every caller holds it.
func (e *ewmaRate) update(d uint64) {
	r := atomic.LoadUint64(&e.rate)
	atomic.StoreUint64(&e.rate, r/2+d)
}

// The same helper called once without the lock.
type ewmaFast struct {
	mu   sync.Mutex
	rate uint64 // want rate:`atomic\(atomic.Load at atom.go:\d+\)`
}

func (e *ewmaFast) Tick(d uint64, fast bool) {
	if fast {
		e.update(d)
		return
	}
	e.mu.Lock()
	e.update(d)
	e.mu.Unlock()
}

func (e *ewmaFast) update(d uint64) {
	r := atomic.LoadUint64(&e.rate) // want `the atomic load of e.rate computes a later atomic Store of it`
	atomic.StoreUint64(&e.rate, r/2+d)
}

// A struct that holds an atomic.Bool, reset with a plain assignment.
type flagged struct {
	done atomic.Bool
	name string
}

type runner struct{ f flagged }

func (r *runner) finish() { r.f.done.Store(true) }

func (r *runner) reset() { r.f = flagged{} }

// Segments in an array, their counters added atomically. A range with
// the index only over an array does not evaluate the array (its len is
// constant), so it reads none of it; one with the value copies each
// element, counter and all.
type segment struct{ hits uint64 } // want hits:`atomic\(atomic.Add at atom.go:\d+\)`

type segmented struct{ segs [4]segment }

func (c *segmented) hit(i int) { atomic.AddUint64(&c.segs[i%4].hits, 1) }

func (c *segmented) total() (n uint64) {
	for i := range c.segs {
		n += atomic.LoadUint64(&c.segs[i].hits)
	}
	for i, _ := range c.segs {
		n += atomic.LoadUint64(&c.segs[i].hits)
	}
	for range c.segs {
		n++
	}
	return n
}

func (c *segmented) totalCopies() (n uint64) {
	for _, s := range c.segs { // want `c.segs is read plainly here, and with it its field hits, which is accessed atomically elsewhere \(atomic.Add at atom.go:\d+\)`
		n += s.hits
	}
	return n
}

// A cache's counters, added to atomically in the cache, and a report
// that embeds a copy of them by value: the report's fields are another
// instance than the cache's, so its plain writes are not reported. A
// function given a pointer to the counters can be handed either, and
// its plain read is.
type Counters struct{ Gets, Misses uint64 } // want Gets:`atomic\(atomic.Add at atom.go:\d+\)` Misses:`atomic\(atomic.Add at atom.go:\d+\)`

type Report struct {
	Counters
	Entries int
}

type countedCache struct {
	counters Counters
	shards   [2]Counters
}

func (c *countedCache) get(hit bool) {
	atomic.AddUint64(&c.counters.Gets, 1)
	if !hit {
		atomic.AddUint64(&c.shards[1].Misses, 1)
	}
}

// reset is called only on the cache's own counters: its atomic stores
// are of the instances held in countedCache.counters.
func (p *Counters) reset() {
	atomic.StoreUint64(&p.Gets, 0)
}

func (c *countedCache) Reset() { c.counters.reset() }

func (c *countedCache) UpdateReport(r *Report) {
	r.Gets += atomic.LoadUint64(&c.counters.Gets)
	r.Misses += atomic.LoadUint64(&c.shards[0].Misses)
	var local Counters
	local.Gets = 1
	r.Entries = int(local.Gets)
}

func missesOf(p *Counters) uint64 {
	return p.Misses // want `p.Misses is read plainly here but accessed atomically elsewhere \(atomic.Add at atom.go:\d+\)`
}

func (c *countedCache) resetShard(i int) {
	c.shards[i].Misses = 0 // want `c.shards\[i\].Misses is written plainly here but accessed atomically elsewhere \(atomic.Add at atom.go:\d+\)`
}

// A breaker's test time is loaded and swapped atomically by the readers
// of its RWMutex, and set plainly by the one that holds it for writing:
// the write excludes them. A reset without the lock does not.
type breaker struct {
	mu       sync.RWMutex
	open     bool
	lastTest int64 // want lastTest:`atomic\(atomic.Load at atom.go:\d+\)`
}

func (b *breaker) allowTest(now int64) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	last := atomic.LoadInt64(&b.lastTest)
	return b.open && now > last+10 && atomic.CompareAndSwapInt64(&b.lastTest, last, now)
}

func (b *breaker) setOpen(now int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open = true
	b.lastTest = now
}

func (b *breaker) forget() {
	b.lastTest = 0 // want `b.lastTest is written plainly here but accessed atomically elsewhere \(atomic.Load at atom.go:\d+\)`
}
