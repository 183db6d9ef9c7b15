package tracegen

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// Shape describes a trace made of units of work, the shape of a long
// test run: goroutines that each run, over and over, a unit (an atomic
// region) of critical sections over the variables their locks guard. It
// is what the prediction's scaling benchmark sweeps: the counts of
// goroutines, locks and variables, how deep locks nest, how many
// accesses hold no lock, whether the goroutines switch only between units
// or anywhere, and whether the units are atomic or not.
//
// Variable v is guarded by lock v mod Locks (Locks is at most Vars). A
// unit is one of Sites code paths (its sites: one per position in the
// unit and operation, so that findings have few site combinations
// however many variables there are). Without Violations a unit takes
// its locks once, nested in increasing order, and accesses only the
// variables of the locks it holds, and unlocked accesses touch variables
// of the goroutine's own: no interleaving can break a unit, and the
// trace has no finding. With Violations a unit is one to three critical
// sections in sequence over the same locks (a read in one, the write in
// the next: the update can be lost), and unlocked accesses touch shared
// variables (races).
//
// With Lifetime, goroutines are short-lived, the shape of a worker pool's
// tests: each goroutine but main ends after Lifetime units, sending on a
// channel as it ends, and main receives that message before it forks a
// goroutine in its place, so that main's clock, and that of every
// goroutine it forks, has a component for each goroutine that ended so
// far: thousands of goroutines, each knowing of those before it.
//
// With Fixed, each code path is the same code each time it runs, as a
// function is: the same locks, nested the same way, the same sections,
// and at each position the same operation on a variable of the same
// lock, held or not; only the objects vary, which of a lock's variables
// each access touches (the instance of a struct whose field the site
// names). A site then touches the variables of one lock only, and the
// findings' site combinations are bounded by the code, not by the trace:
// the shape of a real program's long run. Without it, each unit draws
// its code afresh, and the combinations grow with the trace.
//
// With Long, a unit is one region around a long loop, the shape of a
// test whose region spans a loop of calls: it holds lock 0 throughout,
// and runs Long critical sections of other locks inside it, each over
// their variables and one of lock 0's. Lock 0's acquisition history
// grows with each section, so the accesses made under it have ever more
// lock states, and one unit's transaction holds many variables. Units
// are serial under lock 0: such a trace has no finding.
type Shape struct {
	Seed        uint64
	Events      int     // about how many events (default 1000)
	Goroutines  int     // goroutines, main included (default 8)
	Locks       int     // mutexes (default 16, at most Vars)
	Vars        int     // shared variables (default 64)
	Nesting     int     // deepest lock nesting in a critical section (default 1)
	Unlocked    float64 // share of accesses made holding no lock (default 0)
	Interleaved bool    // switch goroutines at any event, not only between units
	Violations  bool    // units of several critical sections; unlocked accesses to shared variables
	Sites       int     // code paths the units run (default 16)
	Lifetime    int     // units a goroutine other than main runs before it ends and main forks another (0: all run to the end)
	Long        int     // critical sections of a unit held inside lock 0 (0: units as above)
	Fixed       bool    // each code path runs the same code each time: only its objects vary
}

func (s *Shape) defaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&s.Events, 1000)
	def(&s.Goroutines, 8)
	def(&s.Locks, 16)
	def(&s.Vars, 64)
	def(&s.Nesting, 1)
	def(&s.Sites, 16)
	s.Locks = min(s.Locks, s.Vars)
	s.Nesting = min(s.Nesting, s.Locks)
	s.Unlocked = min(max(s.Unlocked, 0), 1)
}

// String names the shape compactly, for benchmark names.
func (s Shape) String() string {
	s.defaults()
	sched := "serial"
	if s.Interleaved {
		sched = "interleaved"
	}
	av := "atomic"
	if s.Violations {
		av = "violating"
	}
	name := fmt.Sprintf("g%d-l%d-v%d-n%d-u%g-%s-%s", s.Goroutines, s.Locks, s.Vars, s.Nesting, s.Unlocked*100, sched, av)
	if s.Lifetime > 0 {
		name += fmt.Sprintf("-life%d", s.Lifetime)
	}
	if s.Long > 0 {
		name += fmt.Sprintf("-long%d", s.Long)
	}
	if s.Fixed {
		name += "-fixed"
	}
	return name
}

// Object ids and sites of a shape's trace.
const (
	shapeVarBase   = 0x1_0000_0000
	shapeLockBase  = 0x2_0000_0000
	shapeLocalBase = 0x3_0000_0000
	shapeChan      = 0x4_0000_0000 // the channel on which short-lived goroutines say they end (Lifetime)
	shapeLocals    = 4             // unshared variables per goroutine
	// shapePositions is the number of access positions in a unit with
	// sites of their own; later accesses share the last.
	shapePositions = 16
	shapeSiteGo    = 1
	shapeSiteLock  = 2
	shapeSiteRel   = 3
	shapeSiteUnit  = 4
	shapeSiteAcc   = 5 // the first access site
)

// ShapeGenerator streams a Shape's trace; it is a trace.Reader.
type ShapeGenerator struct {
	s      Shape
	rng    *rand.Rand
	seq    uint64
	forked int
	gs     []shapeG
	cur    int
	held   []bool // per lock
	values []uint64
	locals []uint64
	inst   uint64
	ending bool // no new units
	tables
	// With Lifetime: the next goroutine id to fork, the messages sent on
	// shapeChan, the places in gs of the goroutines that ended and that
	// main has not yet planned to replace, and the sites of the events
	// that end and replace a goroutine.
	nextID                      trace.GoID
	sent                        uint64
	ended                       []int
	siteSend, siteRecv, siteEnd trace.SiteID
}

// shapeG is a goroutine's unit of work: the steps it has left to run.
type shapeG struct {
	plan []trace.Event
	next int
	// With Lifetime: the goroutine in this place, the units it has
	// begun, the message it sent as it ended, and whether it has ended
	// (and main has not yet forked the next).
	id    trace.GoID
	units int
	msg   uint64
	dead  bool
}

// NewShape returns a generator of the trace s describes.
func NewShape(s Shape) *ShapeGenerator {
	s.defaults()
	g := &ShapeGenerator{
		s:      s,
		rng:    rand.New(rand.NewPCG(s.Seed, s.Seed^0x5851f42d4c957f2d)),
		gs:     make([]shapeG, s.Goroutines),
		held:   make([]bool, s.Locks),
		values: make([]uint64, s.Vars),
		locals: make([]uint64, s.Goroutines*shapeLocals),
		tables: tables{objs: make(map[trace.ObjID]trace.Object)},
	}
	g.sites = make([]trace.Site, shapeSiteAcc+s.Sites*shapePositions*2)
	g.sites[shapeSiteGo] = trace.Site{File: "shape.go", Line: 1, Col: 2, Func: "shape.main"}
	g.sites[shapeSiteLock] = trace.Site{File: "shape.go", Line: 2, Col: 2, Func: "shape.lock"}
	g.sites[shapeSiteRel] = trace.Site{File: "shape.go", Line: 3, Col: 2, Func: "shape.unlock"}
	g.sites[shapeSiteUnit] = trace.Site{File: "shape.go", Line: 4, Col: 2, Func: "shape.unit"}
	for i := shapeSiteAcc; i < len(g.sites); i++ {
		k := i - shapeSiteAcc
		fn := k / (2 * shapePositions)
		g.sites[i] = trace.Site{File: fmt.Sprintf("unit%d.go", fn), Line: 10 + k%(2*shapePositions), Col: 2, Func: fmt.Sprintf("shape.unit%d", fn)}
	}
	for i := range s.Vars {
		g.objs[shapeVarBase+trace.ObjID(i)*8] = trace.Object{Kind: trace.ObjVar, Name: fmt.Sprintf("x%d", i)}
	}
	for i := range s.Locks {
		g.objs[shapeLockBase+trace.ObjID(i)*8] = trace.Object{Kind: trace.ObjMutex, Name: fmt.Sprintf("mu%d", i)}
	}
	for i := range s.Goroutines * shapeLocals {
		g.objs[shapeLocalBase+trace.ObjID(i)*8] = trace.Object{Kind: trace.ObjVar, Name: fmt.Sprintf("g%d.l%d", i/shapeLocals+1, i%shapeLocals)}
	}
	for i := range g.gs {
		g.gs[i].id = trace.GoID(i + 1)
	}
	if s.Lifetime > 0 {
		// After the other shapes' sites, so that theirs do not change.
		g.nextID = trace.GoID(s.Goroutines + 1)
		g.objs[shapeChan] = trace.Object{Kind: trace.ObjChan, Name: "done", Cap: s.Goroutines}
		g.siteSend, g.siteRecv, g.siteEnd = trace.SiteID(len(g.sites)), trace.SiteID(len(g.sites)+1), trace.SiteID(len(g.sites)+2)
		g.sites = append(g.sites,
			trace.Site{File: "shape.go", Line: 5, Col: 2, Func: "shape.worker"},
			trace.Site{File: "shape.go", Line: 6, Col: 2, Func: "shape.main"},
			trace.Site{File: "shape.go", Line: 7, Col: 1, Func: "shape.worker"})
	}
	return g
}

// ShapeTrace generates the whole trace of s into memory, for tests.
func ShapeTrace(s Shape) *trace.Trace {
	g := NewShape(s)
	return collect(&g.tables, g.Next)
}

// Next returns the next event, or io.EOF after the last.
func (g *ShapeGenerator) Next() (trace.Event, error) {
	if g.forked < g.s.Goroutines-1 {
		g.forked++
		return g.stamp(trace.Event{G: 1, Kind: trace.KindFork, Arg: uint64(g.forked + 1), Site: shapeSiteGo}), nil
	}
	if int(g.seq) >= g.s.Events {
		g.ending = true
	}
	// Pick a goroutine that can take a step: the current one unless the
	// schedule switches (at any step when interleaved, else between
	// units) or its next step waits for a lock.
	gr := &g.gs[g.cur]
	if g.s.Interleaved && g.rng.IntN(4) == 0 || gr.next == len(gr.plan) {
		g.cur = g.rng.IntN(len(g.gs))
	}
	for tries := 0; ; tries++ {
		gr = &g.gs[g.cur]
		if gr.next == len(gr.plan) && !g.ending {
			g.plan(g.cur)
		}
		if gr.next < len(gr.plan) && g.ready(&gr.plan[gr.next]) {
			break
		}
		if tries > 4*len(g.gs) {
			// Look at each goroutine in turn: one can go on, since locks
			// are taken in increasing order.
			for i := range g.gs {
				if h := &g.gs[i]; h.next < len(h.plan) && g.ready(&h.plan[h.next]) {
					g.cur = i
					return g.step(h), nil
				}
			}
			return trace.Event{}, io.EOF
		}
		g.cur = g.rng.IntN(len(g.gs))
	}
	return g.step(gr), nil
}

// ready reports whether step e can run now.
func (g *ShapeGenerator) ready(e *trace.Event) bool {
	return e.Kind != trace.KindAcquire || !g.held[(e.Obj-shapeLockBase)/8]
}

// step runs the next step of goroutine gr, filling in the values.
func (g *ShapeGenerator) step(gr *shapeG) trace.Event {
	e := gr.plan[gr.next]
	gr.next++
	switch e.Kind {
	case trace.KindAcquire:
		g.held[(e.Obj-shapeLockBase)/8] = true
	case trace.KindRelease:
		g.held[(e.Obj-shapeLockBase)/8] = false
	case trace.KindSend:
		g.sent++
		e.Arg, gr.msg = g.sent, g.sent
	case trace.KindEnd:
		gr.dead = true
		g.ended = append(g.ended, g.cur)
	case trace.KindFork:
		// Main forks the goroutine that takes the place of an ended one
		// (Value holds the place).
		h := &g.gs[e.Value]
		h.id, h.units, h.dead, h.plan, h.next = trace.GoID(e.Arg), 0, false, h.plan[:0], 0
		e.Value = 0
	case trace.KindRead, trace.KindWrite:
		var val *uint64
		if e.Obj >= shapeLocalBase {
			val = &g.locals[(e.Obj-shapeLocalBase)/8]
		} else {
			val = &g.values[(e.Obj-shapeVarBase)/8]
		}
		if e.Kind == trace.KindWrite {
			*val++
		}
		e.Value, e.Flags = *val, trace.HasValue
	}
	return g.stamp(e)
}

func (g *ShapeGenerator) stamp(e trace.Event) trace.Event {
	e.Seq = g.seq
	g.seq++
	return e
}

// plan makes goroutine gi's next unit of work.
func (g *ShapeGenerator) plan(gi int) {
	s := &g.s
	gr := &g.gs[gi]
	if gr.dead {
		return
	}
	gr.plan, gr.next = gr.plan[:0], 0
	id := gr.id
	if s.Lifetime > 0 && gi > 0 && gr.units == s.Lifetime {
		// Its last unit is done: it says so (the message's number is
		// given when it is sent), and ends.
		gr.plan = append(gr.plan,
			trace.Event{G: id, Kind: trace.KindSend, Obj: shapeChan, Site: g.siteSend},
			trace.Event{G: id, Kind: trace.KindEnd, Site: g.siteEnd})
		return
	}
	gr.units++
	if gi == 0 {
		// Main first replaces the goroutines that ended: it receives the
		// message of each, so that what the goroutine did happens before
		// what the next does in its place (its variables included).
		for _, k := range g.ended {
			gr.plan = append(gr.plan,
				trace.Event{G: id, Kind: trace.KindRecv, Obj: shapeChan, Arg: g.gs[k].msg, Site: g.siteRecv},
				trace.Event{G: id, Kind: trace.KindFork, Arg: uint64(g.nextID), Value: uint64(k), Site: shapeSiteGo})
			g.nextID++
		}
		g.ended = g.ended[:0]
	}
	fn := g.rng.IntN(s.Sites)
	// The unit's code comes from code, its objects from g.rng: the same
	// source unless the paths are Fixed, when code is drawn afresh from
	// the path's own seed, the same draws each time.
	code := g.rng
	if s.Fixed {
		code = rand.New(rand.NewPCG(s.Seed^uint64(fn+1)*0x9e3779b97f4a7c15, uint64(fn)))
	}
	g.inst++
	region, inst := trace.RegionID(fn+1), g.inst
	pos := 0
	add := func(k trace.Kind, obj trace.ObjID, site int) {
		gr.plan = append(gr.plan, trace.Event{G: id, Kind: k, Obj: obj, Site: trace.SiteID(site), Region: region, Inst: inst})
	}
	access := func(v trace.ObjID) {
		k := trace.KindRead
		if code.IntN(3) == 0 {
			k = trace.KindWrite
		}
		site := shapeSiteAcc + (fn*shapePositions+min(pos, shapePositions-1))*2
		if k == trace.KindWrite {
			site++
		}
		pos++
		add(k, v, site)
		gr.plan[len(gr.plan)-1].Branches = uint32(code.IntN(3))
	}
	perLock := s.Vars / s.Locks
	varOf := func(l int) trace.ObjID {
		return shapeVarBase + trace.ObjID(l+s.Locks*g.rng.IntN(perLock))*8
	}
	if s.Long > 0 && s.Locks > 1 {
		g.planLong(add, access, varOf)
		return
	}
	unlocked := func() {
		if s.Violations {
			access(varOf(code.IntN(s.Locks)))
		} else {
			access(shapeLocalBase + trace.ObjID(gi*shapeLocals+g.rng.IntN(shapeLocals))*8)
		}
	}
	// The locks of the unit's critical sections, in increasing order.
	depth := 1 + code.IntN(s.Nesting)
	locks := make([]int, 0, depth)
	for len(locks) < depth {
		l := code.IntN(s.Locks)
		i := 0
		for i < len(locks) && locks[i] < l {
			i++
		}
		if i < len(locks) && locks[i] == l {
			continue
		}
		locks = append(locks, 0)
		copy(locks[i+1:], locks[i:])
		locks[i] = l
	}
	sections := 1
	if s.Violations {
		sections = 1 + code.IntN(3)
	}
	add(trace.KindRegionBegin, 0, shapeSiteUnit)
	// A critical section's variables: the same in each of the unit's
	// sections, so that a split one reads in one and writes in the next.
	vars := make([]trace.ObjID, 0, 2*depth)
	for _, l := range locks {
		for range 1 + code.IntN(2) {
			vars = append(vars, varOf(l))
		}
	}
	for range sections {
		skipped := 0
		for _, l := range locks {
			add(trace.KindAcquire, shapeLockBase+trace.ObjID(l)*8, shapeSiteLock)
			// The variables this lock guards, with the outer ones held.
			for _, v := range vars {
				if int((v-shapeVarBase)/8)%s.Locks != l {
					continue
				}
				if code.Float64() < s.Unlocked {
					skipped++ // made below, holding no lock
					continue
				}
				access(v)
			}
		}
		for i := len(locks) - 1; i >= 0; i-- {
			add(trace.KindRelease, shapeLockBase+trace.ObjID(locks[i])*8, shapeSiteRel)
		}
		for range skipped {
			unlocked()
		}
	}
	add(trace.KindRegionEnd, 0, shapeSiteUnit)
}

// planLong makes a unit of a Long shape: lock 0 held around Long
// critical sections, each of one to Nesting other locks, nested in
// increasing order.
func (g *ShapeGenerator) planLong(add func(trace.Kind, trace.ObjID, int), access func(trace.ObjID), varOf func(int) trace.ObjID) {
	s := &g.s
	lock := func(k trace.Kind, l int) {
		site := shapeSiteLock
		if k == trace.KindRelease {
			site = shapeSiteRel
		}
		add(k, shapeLockBase+trace.ObjID(l)*8, site)
	}
	add(trace.KindRegionBegin, 0, shapeSiteUnit)
	lock(trace.KindAcquire, 0)
	for range s.Long {
		depth := 1 + g.rng.IntN(min(s.Nesting, s.Locks-1))
		first := 1 + g.rng.IntN(s.Locks-depth)
		for l := first; l < first+depth; l++ {
			lock(trace.KindAcquire, l)
			access(varOf(l))
		}
		access(shapeVarBase) // x0, lock 0's first variable: a counter of the loop
		for l := first + depth - 1; l >= first; l-- {
			lock(trace.KindRelease, l)
		}
	}
	lock(trace.KindRelease, 0)
	add(trace.KindRegionEnd, 0, shapeSiteUnit)
}
