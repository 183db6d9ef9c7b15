// Package tracegen generates synthetic, valid avcheck traces: goroutines
// that lock (nested, and read-lock), read and write shared and unshared
// variables (with values and branch counts), pass messages on channels
// that main closes at the end, signal and wait on a Cond, use a Once and
// atomics, enter atomic regions, and are joined through a WaitGroup. The
// same Config and seed always give the same trace; every trace passes
// trace.Validate.
//
// It serves two purposes: benchmarks, which need millions of events
// without holding them (a Generator is a trace.Reader), and differential
// tests, which need many small random traces with knobs for their shape.
package tracegen

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// Config shapes a generated trace. Zero fields take the defaults noted;
// a negative LocalVars or probability means none.
type Config struct {
	Seed       uint64  // the random seed
	Events     int     // about how many events to generate (default 1000)
	Goroutines int     // goroutines, including main (default 4)
	Locks      int     // mutexes, the first RWLocks of them RWMutexes (default 4)
	RWLocks    int     // how many of the locks are RWMutexes (default 0)
	Vars       int     // shared variables (default 8)
	LocalVars  int     // unshared variables per goroutine (default 2)
	Chans      int     // channels, capacity 0 to 2 (default 1)
	Regions    int     // static atomic regions (default 4)
	MaxNesting int     // deepest lock nesting (default 2)
	SyncProb   float64 // probability of a channel, atomic, Cond or Once operation per step (default 0.05)
	LockProb   float64 // probability of trying to acquire a lock per step (default 0.15)
	RegionProb float64 // probability of entering a region per step (default 0.05)
	Switch     float64 // probability of switching goroutine per step (default 0.3)
}

func (c *Config) defaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.Events, 1000)
	def(&c.Goroutines, 4)
	def(&c.Locks, 4)
	def(&c.Vars, 8)
	if c.LocalVars == 0 {
		c.LocalVars = 2
	}
	c.LocalVars = max(c.LocalVars, 0)
	def(&c.Chans, 1)
	def(&c.Regions, 4)
	def(&c.MaxNesting, 2)
	c.RWLocks = min(max(c.RWLocks, 0), c.Locks)
	deff := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
		*p = max(*p, 0)
	}
	deff(&c.SyncProb, 0.05)
	deff(&c.LockProb, 0.15)
	deff(&c.RegionProb, 0.05)
	deff(&c.Switch, 0.3)
}

// Object id bases: each kind of object gets its own range, like the
// addresses of distinct allocations.
const (
	varBase    = 0x1000
	lockBase   = 0x2000
	chanBase   = 0x3000
	wgID       = 0x4000
	onceID     = 0x5000
	atomicID   = 0x6000
	condID     = 0x7000
	localBase  = 0x100000
	localSpace = 0x100
)

// Sites: one per kind of step, so that findings have places to point at.
const (
	siteRead = iota + 1
	siteWrite
	siteLock
	siteUnlock
	siteGo
	siteEnd
	siteSend
	siteRecv
	siteWG
	siteOnce
	siteAtomic
	siteRegion
	siteCond
	siteClose
	numSites
)

// sites returns the site table, fresh for each generator so that no one
// can change another's.
func sites() []trace.Site {
	return []trace.Site{
		siteRead:   {File: "gen.go", Line: 10, Col: 2, Func: "gen.read"},
		siteWrite:  {File: "gen.go", Line: 20, Col: 2, Func: "gen.write"},
		siteLock:   {File: "gen.go", Line: 30, Col: 2, Func: "gen.lock"},
		siteUnlock: {File: "gen.go", Line: 40, Col: 2, Func: "gen.unlock"},
		siteGo:     {File: "gen.go", Line: 50, Col: 2, Func: "gen.main"},
		siteEnd:    {File: "gen.go", Line: 60, Col: 1, Func: "gen.worker"},
		siteSend:   {File: "gen.go", Line: 70, Col: 2, Func: "gen.send"},
		siteRecv:   {File: "gen.go", Line: 80, Col: 2, Func: "gen.recv"},
		siteWG:     {File: "gen.go", Line: 90, Col: 2, Func: "gen.main"},
		siteOnce:   {File: "gen.go", Line: 100, Col: 2, Func: "gen.init"},
		siteAtomic: {File: "gen.go", Line: 110, Col: 2, Func: "gen.count"},
		siteRegion: {File: "gen.go", Line: 120, Col: 2, Func: "gen.atomic"},
		siteCond:   {File: "gen.go", Line: 130, Col: 2, Func: "gen.wake"},
		siteClose:  {File: "gen.go", Line: 140, Col: 2, Func: "gen.main"},
	}
}

type held struct {
	lock int
	read bool
}

type gstate struct {
	id      trace.GoID
	held    []held
	regions []regionInst
	onced   bool // has called once.Do
	wgDone  bool // has called wg.Done
	done    bool // has ended
}

type regionInst struct {
	region trace.RegionID
	inst   uint64
}

type lockState struct {
	writer  bool
	readers int
}

type chanState struct {
	cap            int
	sent, received uint64
}

// Generator streams a generated trace; it is a trace.Reader.
type Generator struct {
	cfg    Config
	rng    *rand.Rand
	seq    uint64
	ev     trace.Event // the event of the current step
	have   bool        // whether ev is yet to be returned
	forked int         // workers forked so far
	tables
	gs      []*gstate
	cur     int
	locks   []lockState
	chans   []chanState
	values  []uint64 // current value of each shared variable
	locals  []uint64
	atomic  uint64
	inst    uint64
	onceRan bool
	signals int // Cond signals not yet matched by a Wait
	closed  int // channels closed while winding down
	phase   int // 0 start, 1 run, 2 wind down, 3 finished
}

// New returns a generator of the trace cfg describes.
func New(cfg Config) *Generator {
	cfg.defaults()
	g := &Generator{
		cfg:    cfg,
		rng:    rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		locks:  make([]lockState, cfg.Locks),
		chans:  make([]chanState, cfg.Chans),
		values: make([]uint64, cfg.Vars),
		locals: make([]uint64, cfg.Goroutines*cfg.LocalVars),
		tables: tables{sites: sites(), objs: make(map[trace.ObjID]trace.Object)},
	}
	for i := range g.chans {
		g.chans[i].cap = i % 3
	}
	for i := 0; i < cfg.Goroutines; i++ {
		g.gs = append(g.gs, &gstate{id: trace.GoID(i + 1)})
	}
	g.declare()
	return g
}

func (g *Generator) declare() {
	for i := 0; i < g.cfg.Vars; i++ {
		g.objs[varBase+trace.ObjID(i*8)] = trace.Object{Kind: trace.ObjVar, Name: fmt.Sprintf("x%d", i)}
	}
	for i := 0; i < g.cfg.Locks; i++ {
		k := trace.ObjMutex
		if i < g.cfg.RWLocks {
			k = trace.ObjRWMutex
		}
		g.objs[lockBase+trace.ObjID(i*8)] = trace.Object{Kind: k, Name: fmt.Sprintf("mu%d", i)}
	}
	for i := range g.chans {
		g.objs[chanBase+trace.ObjID(i*8)] = trace.Object{Kind: trace.ObjChan, Name: fmt.Sprintf("ch%d", i), Cap: g.chans[i].cap}
	}
	g.objs[wgID] = trace.Object{Kind: trace.ObjWaitGroup, Name: "wg"}
	g.objs[onceID] = trace.Object{Kind: trace.ObjOnce, Name: "once"}
	g.objs[atomicID] = trace.Object{Kind: trace.ObjVar, Name: "hits"}
	g.objs[condID] = trace.Object{Kind: trace.ObjCond, Name: "cond"}
	for gi := 0; gi < g.cfg.Goroutines; gi++ {
		for i := 0; i < g.cfg.LocalVars; i++ {
			g.objs[g.localID(gi, i)] = trace.Object{Kind: trace.ObjVar, Name: fmt.Sprintf("g%d.l%d", gi+1, i)}
		}
	}
}

func (g *Generator) localID(gi, i int) trace.ObjID {
	return localBase + trace.ObjID(gi*localSpace+i*8)
}

// tables are a generator's sites and objects, which its trace.Reader
// methods describe.
type tables struct {
	sites []trace.Site
	objs  map[trace.ObjID]trace.Object
}

// Site describes the generator's sites.
func (t *tables) Site(id trace.SiteID) trace.Site {
	if int(id) < len(t.sites) {
		return t.sites[id]
	}
	return trace.Site{}
}

// Object describes the generator's objects.
func (t *tables) Object(id trace.ObjID) trace.Object { return t.objs[id] }

// collect reads a generator's whole trace into memory.
func collect(tab *tables, next func() (trace.Event, error)) *trace.Trace {
	t := &trace.Trace{Sites: tab.sites, Objects: tab.objs}
	for {
		e, err := next()
		if err != nil {
			return t
		}
		t.Events = append(t.Events, e)
	}
}

// Trace generates the whole trace into memory, for small tests.
func Trace(cfg Config) *trace.Trace {
	g := New(cfg)
	return collect(&g.tables, g.Next)
}

// Write generates the trace into w and flushes it.
func Write(cfg Config, w trace.Writer) (int64, error) {
	return trace.Copy(w, New(cfg))
}

// Next returns the next event, or io.EOF after the last.
func (g *Generator) Next() (trace.Event, error) {
	for !g.have {
		if g.phase == 3 {
			return trace.Event{}, io.EOF
		}
		g.step()
	}
	g.have = false
	return g.ev, nil
}

// emit makes the step's event, an event of goroutine s, in the outermost region it is in.
func (g *Generator) emit(s *gstate, k trace.Kind, obj trace.ObjID, arg uint64, site int) *trace.Event {
	e := trace.Event{Seq: g.seq, G: s.id, Kind: k, Obj: obj, Arg: arg, Site: trace.SiteID(site)}
	g.seq++
	if len(s.regions) > 0 {
		e.Region, e.Inst = s.regions[0].region, s.regions[0].inst
	}
	if k.IsAccess() || k == trace.KindAcquire {
		e.Branches = uint32(g.rng.IntN(3))
	}
	g.ev, g.have = e, true
	return &g.ev
}

// step generates the next event or few.
func (g *Generator) step() {
	main := g.gs[0]
	switch g.phase {
	case 0:
		// main adds the workers to the WaitGroup and starts them.
		if n := len(g.gs) - 1; n > 0 && g.seq == 0 {
			g.emit(main, trace.KindWGAdd, wgID, uint64(n), siteWG)
			return
		}
		if g.forked < len(g.gs)-1 {
			g.forked++
			g.emit(main, trace.KindFork, 0, uint64(g.gs[g.forked].id), siteGo)
			return
		}
		g.phase = 1
	case 1:
		if int(g.seq) >= g.cfg.Events-g.reserve() {
			g.phase = 2
			return
		}
		if g.rng.Float64() < g.cfg.Switch {
			g.cur = g.rng.IntN(len(g.gs))
		}
		g.run(g.gs[g.cur])
	case 2:
		g.windDown()
	}
}

// reserve is how many events winding down may take.
func (g *Generator) reserve() int {
	return len(g.gs)*(g.cfg.MaxNesting+6) + 2*len(g.chans) + 2
}

// windDown releases every lock, closes every region, ends the workers
// and has main wait for them, one event per call.
func (g *Generator) windDown() {
	for _, s := range g.gs {
		if s.done {
			continue
		}
		if g.release(s) || g.leaveRegion(s) {
			return
		}
	}
	for _, s := range g.gs[1:] {
		if !s.done {
			if !s.wgDone {
				s.wgDone = true
				g.emit(s, trace.KindWGDone, wgID, 0, siteWG)
				return
			}
			s.done = true
			g.emit(s, trace.KindEnd, 0, 0, siteEnd)
			return
		}
	}
	main := g.gs[0]
	// main closes each channel and, on the last, sees the close.
	if g.closed < len(g.chans) {
		id := chanBase + trace.ObjID(g.closed*8)
		g.closed++
		g.emit(main, trace.KindClose, id, 0, siteClose)
		return
	}
	if g.closed == len(g.chans) && len(g.chans) > 0 {
		g.closed++
		c := &g.chans[len(g.chans)-1]
		id := chanBase + trace.ObjID((len(g.chans)-1)*8)
		arg := uint64(0) // buffered messages are received before the close is seen
		if c.received < c.sent {
			c.received++
			arg = c.received
		}
		g.emit(main, trace.KindRecv, id, arg, siteRecv)
		return
	}
	if !main.done {
		main.done = true
		if len(g.gs) > 1 {
			g.emit(main, trace.KindWGWait, wgID, 0, siteWG)
			return
		}
	}
	g.phase = 3
}

// release releases s's innermost lock, if it holds one.
func (g *Generator) release(s *gstate) bool {
	if len(s.held) == 0 {
		return false
	}
	h := s.held[len(s.held)-1]
	s.held = s.held[:len(s.held)-1]
	l := &g.locks[h.lock]
	id := lockBase + trace.ObjID(h.lock*8)
	if h.read {
		l.readers--
		g.emit(s, trace.KindRRelease, id, 0, siteUnlock)
	} else {
		l.writer = false
		g.emit(s, trace.KindRelease, id, 0, siteUnlock)
	}
	return true
}

// leaveRegion ends s's innermost region, if it is in one.
func (g *Generator) leaveRegion(s *gstate) bool {
	if len(s.regions) == 0 {
		return false
	}
	r := s.regions[len(s.regions)-1]
	s.regions = s.regions[:len(s.regions)-1]
	e := g.emit(s, trace.KindRegionEnd, 0, 0, siteRegion)
	e.Region, e.Inst = r.region, r.inst
	return true
}

// run generates one step of goroutine s in the run phase.
func (g *Generator) run(s *gstate) {
	r := g.rng.Float64()
	switch {
	case r < g.cfg.LockProb:
		if len(s.held) < g.cfg.MaxNesting && g.acquire(s) {
			return
		}
		if g.release(s) {
			return
		}
	case r < g.cfg.LockProb*2:
		// Releases as often as acquires, so the nesting stays shallow.
		if g.release(s) {
			return
		}
	case r < g.cfg.LockProb*2+g.cfg.RegionProb:
		if len(s.regions) < 3 {
			g.inst++
			reg := regionInst{trace.RegionID(1 + g.rng.IntN(g.cfg.Regions)), g.inst}
			s.regions = append(s.regions, reg)
			e := g.emit(s, trace.KindRegionBegin, 0, 0, siteRegion)
			e.Region, e.Inst = reg.region, reg.inst
			return
		}
	case r < g.cfg.LockProb*2+g.cfg.RegionProb*2:
		if g.leaveRegion(s) {
			return
		}
	case r < g.cfg.LockProb*2+g.cfg.RegionProb*2+g.cfg.SyncProb:
		if g.sync(s) {
			return
		}
	}
	g.access(s)
}

// acquire tries to lock a random lock that is free for s.
func (g *Generator) acquire(s *gstate) bool {
	i := g.rng.IntN(len(g.locks))
	for _, h := range s.held {
		if h.lock == i {
			return false // Go mutexes are not reentrant
		}
	}
	l := &g.locks[i]
	id := lockBase + trace.ObjID(i*8)
	read := i < g.cfg.RWLocks && g.rng.IntN(2) == 0
	switch {
	case read && !l.writer:
		l.readers++
		s.held = append(s.held, held{i, true})
		g.emit(s, trace.KindRAcquire, id, 0, siteLock)
	case !read && !l.writer && l.readers == 0:
		l.writer = true
		s.held = append(s.held, held{i, false})
		g.emit(s, trace.KindAcquire, id, 0, siteLock)
	default:
		return false
	}
	return true
}

// sync does a channel, atomic or Once operation, if one can proceed.
func (g *Generator) sync(s *gstate) bool {
	switch g.rng.IntN(5) {
	case 0, 1:
		i := g.rng.IntN(len(g.chans))
		c := &g.chans[i]
		id := chanBase + trace.ObjID(i*8)
		// An unbuffered send is recorded before its receive completes,
		// so one message may be in flight even at capacity 0.
		if c.sent-c.received < uint64(max(c.cap, 1)) && g.rng.IntN(2) == 0 {
			c.sent++
			g.emit(s, trace.KindSend, id, c.sent, siteSend)
			return true
		}
		if c.received < c.sent {
			c.received++
			g.emit(s, trace.KindRecv, id, c.received, siteRecv)
			return true
		}
	case 2:
		kinds := [...]trace.Kind{trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW}
		k := kinds[g.rng.IntN(3)]
		if k != trace.KindAtomicLoad {
			g.atomic++
		}
		e := g.emit(s, k, atomicID, 0, siteAtomic)
		e.Value, e.Flags = g.atomic, trace.HasValue
		return true
	case 4:
		// A Wait returns only after a Signal or Broadcast woke it; each
		// signal here wakes one waiter, a broadcast all that are counted.
		if g.signals > 0 && g.rng.IntN(2) == 0 {
			g.signals--
			g.emit(s, trace.KindCondWait, condID, 0, siteCond)
			return true
		}
		k := trace.KindCondSignal
		if g.rng.IntN(4) == 0 {
			k = trace.KindCondBroadcast
		}
		g.signals++
		g.emit(s, k, condID, 0, siteCond)
		return true
	case 3:
		if !s.onced {
			s.onced = true
			ran := uint64(0)
			if !g.onceRan {
				g.onceRan, ran = true, 1
			}
			g.emit(s, trace.KindOnceDo, onceID, ran, siteOnce)
			return true
		}
	}
	return false
}

// access reads or writes a shared or local variable, recording values.
func (g *Generator) access(s *gstate) {
	var val *uint64
	var id trace.ObjID
	if g.cfg.LocalVars > 0 && g.rng.IntN(4) == 0 {
		gi := int(s.id) - 1
		i := g.rng.IntN(g.cfg.LocalVars)
		val, id = &g.locals[gi*g.cfg.LocalVars+i], g.localID(gi, i)
	} else {
		i := g.rng.IntN(len(g.values))
		val, id = &g.values[i], varBase+trace.ObjID(i*8)
	}
	k, site := trace.KindRead, siteRead
	if g.rng.IntN(3) == 0 {
		k, site = trace.KindWrite, siteWrite
		*val++
	}
	e := g.emit(s, k, id, 0, site)
	e.Value, e.Flags = *val, trace.HasValue
}
