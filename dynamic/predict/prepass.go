package predict

import (
	"slices"
	"sync"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file builds the pattern search's index (pattern.go, patIndex) one
// run of events at a time, so that it can be built while the trace is
// read: a caller that reads a file hands each run of events it stores to
// Prepass.Add, and PredictIndexed then starts from the index instead of
// making its own passes over the events. The index is the same either
// way: buildIndex feeds the whole trace through the same indexer.

// indexer computes the clocks, groups and region instances of the index
// (the happens-before half of buildIndex) event by event.
type indexer struct {
	ix *patIndex
	h  *HB
	// keyTab[g][2*site+write] is 1 + the dense accKey, 0 if not yet seen:
	// an array lookup per access rather than a map lookup. A row is as
	// wide as the sites, so the rows of the goroutines a run ever
	// started grew with goroutines times sites (780 MB on a worker
	// pool's tests, 89,387 goroutines and 1,091 sites): a goroutine's row
	// is cleared at its end and kept in spareRows for the next goroutine
	// that needs one.
	keyTab    [][]uint32
	spareRows [][]uint32
	insts     instTable
	gs        []indexGo
	varCount  []uint32
	lastObj   trace.ObjID
	lastVar   uint32
	sites     int // a hint for keyTab's rows: the sites known so far
	n         int // events added
	// maxWords, if not zero, bounds the happens-before engine's clocks
	// as ClockBound does (load). Past it, over is set and add adds
	// nothing more.
	maxWords int64
	load     clockLoad
	over     bool
}

// indexGo is an indexer's state of one goroutine.
type indexGo struct {
	snap uint32
	// clock is the goroutine's last snapshot or, before its first, its
	// parent's at the fork: what its next snapshot is made from; since
	// is the happens-before engine's step at which it was taken
	// (HB.Now), after which the leaves that changed are those to
	// compare (clockTree.snapshotSince).
	clock     clockRef
	since     uint64
	dirty     bool
	lastR     trace.RegionID
	lastInst  uint64
	lastInstI uint32
	// open is the region instances the goroutine's begin and end events
	// have open, outermost first, for unitOf.
	open []openInst
	// waits counts the goroutine's waits (endsInstance): the part of a
	// region instance after a wait is an instance of its own
	// (instValue).
	waits uint64
}

// newRow returns a keyTab row for a goroutine: a spare one, cleared, if
// there is one. No goroutine needs its row after its end: a valid trace
// has no event of it after that (trace.Validate), as HB.Step expects.
func (x *indexer) newRow() []uint32 {
	n := len(x.spareRows)
	if n == 0 {
		return nil
	}
	row := x.spareRows[n-1]
	x.spareRows = x.spareRows[:n-1]
	return row
}

// instValue is the dynamic instance inst of a goroutine's region that
// has waited waits times so far, as the index numbers instances. A region
// meant to be atomic holds no wait (seed 002, section V: a region has no
// fork, join or wait inside it); the static rule sees a wait in the
// region's own function, and this one a wait in a function it calls
// (retrieve(); cond.Wait(); retry in a callee, or a retry loop that
// receives a notification between tries): the accesses before the wait
// and those after it are two instances, so that no violation pairs them.
// The recorders number instances from 1, far below 1<<40.
func instValue(inst, waits uint64) uint64 { return inst | waits<<40 }

// endsInstance says whether an event of kind k is a wait of its
// goroutine for another, which ends the region instance it is in
// (instValue): a Cond's or a WaitGroup's Wait, and a channel receive.
func endsInstance(k trace.Kind) bool {
	return k == trace.KindCondWait || k == trace.KindWGWait || k == trace.KindRecv
}

// openInst is a region instance a goroutine's begin event opened.
type openInst struct {
	r        trace.RegionID
	inst     uint64
	intended bool // its intent confirms it, or the trace does not say
}

// newIndexer returns an indexer whose happens-before engine learns the
// channels' capacities from obj, and which expects about n accesses.
func newIndexer(obj func(trace.ObjID) trace.Object, n int) *indexer {
	ix := &patIndex{lockBit: make(map[trace.ObjID]uint), varOf: make(map[trace.ObjID]uint32), clocks: newClockTree()}
	ix.acc = make([]patAccess, 0, n)
	return &indexer{
		ix:      ix,
		h:       NewHB(HBOptions{Object: obj}),
		insts:   instTable{lists: make(map[[2]uint32]*instList)},
		lastVar: ^uint32(0),
	}
}

func (x *indexer) ensure(gi int, g trace.GoID) {
	ix := x.ix
	for len(x.gs) <= gi {
		x.gs = append(x.gs, indexGo{dirty: true})
		ix.gids = append(ix.gids, 0)
		ix.glog = append(ix.glog, []HistoryID{0})
		x.load.start()
		x.over = x.over || x.maxWords > 0 && x.load.over(x.maxWords)
	}
	ix.gids[gi] = g
}

// newInst numbers a region instance, which instTable.find did not
// find at pos of its list.
func (x *indexer) newInst(l *instList, pos int, key instKey) uint32 {
	inst := x.ix.numInst + 1
	l.insert(pos, key.inst, inst)
	x.ix.numInst = inst
	return inst
}

// instTable numbers the region instances of a trace by goroutine, region
// and dynamic instance: per goroutine and region, a list of the instances
// numbered so far in increasing order of their dynamic instance, which
// the recorders give in increasing order, so that a new instance is
// appended after a look at the last one. It holds 12 bytes an instance,
// and sized once (indexer.reserve) does not grow; a map of instKey held
// about 43, and its growth stayed until the end of reading.
type instTable struct {
	lists   map[[2]uint32]*instList
	last    *instList // the list of lastKey: an access's region is mostly its goroutine's last
	lastKey [2]uint32
}

// instList is an instTable's list of one goroutine's instances of one
// region: their dynamic instances, increasing, and their numbers.
type instList struct {
	insts []uint64
	nums  []uint32
}

// list returns the list of goroutine g's instances of region r.
func (t *instTable) list(g trace.GoID, r trace.RegionID) *instList {
	k := [2]uint32{uint32(g), uint32(r)}
	if t.last != nil && t.lastKey == k {
		return t.last
	}
	l := t.lists[k]
	if l == nil {
		l = &instList{}
		t.lists[k] = l
	}
	t.last, t.lastKey = l, k
	return l
}

// find returns the number of dynamic instance inst, or 0 and where in
// the list to insert it.
func (l *instList) find(inst uint64) (num uint32, pos int) {
	n := len(l.insts)
	if n == 0 || inst > l.insts[n-1] {
		return 0, n
	}
	pos, ok := slices.BinarySearch(l.insts, inst)
	if ok {
		return l.nums[pos], pos
	}
	return 0, pos
}

// insert adds dynamic instance inst, numbered num, at pos.
func (l *instList) insert(pos int, inst uint64, num uint32) {
	l.insts = slices.Insert(l.insts, pos, inst)
	l.nums = slices.Insert(l.nums, pos, num)
}

// reserve grows every list to the length expected of it once the trace's
// n events have been added, of total.
func (t *instTable) reserve(n, total int) {
	for _, l := range t.lists {
		if want := expected(len(l.insts), n, total); want > cap(l.insts) {
			c := grownCap(want, cap(l.insts))
			l.insts = append(make([]uint64, 0, c), l.insts...)
			l.nums = append(make([]uint32, 0, c), l.nums...)
		}
	}
}

// setUnit records the unit that instance inst's accesses belong to as
// the goroutine that interferes in an atomic-set violation: the instance
// of the proposal around it (regions.nestProposals), if its goroutine
// has one open right outside it, else the instance itself. Its accesses
// and the proposal's other instances' are one goroutine's work in
// program order, and any two of them, on x and y, between a region's
// accesses to x and y break it (patterns2.go).
func (x *indexer) setUnit(inst uint32, key instKey, open []openInst, waits uint64) {
	ix := x.ix
	unit := inst
	for p := len(open) - 1; p > 0; p-- {
		if open[p].r == key.r && instValue(open[p].inst, waits) == key.inst {
			if out := open[p-1]; !out.intended {
				k := instKey{key.g, out.r, instValue(out.inst, waits)}
				l := x.insts.list(k.g, k.r)
				var pos int
				if unit, pos = l.find(k.inst); unit == 0 {
					unit = x.newInst(l, pos, k)
				}
			}
			break
		}
	}
	if unit != inst && ix.unitOf == nil {
		ix.unitOf = make([]uint32, inst)
		for i := range ix.unitOf {
			ix.unitOf[i] = uint32(i)
		}
	}
	if ix.unitOf != nil {
		for len(ix.unitOf) <= int(ix.numInst) {
			ix.unitOf = append(ix.unitOf, uint32(len(ix.unitOf)))
		}
		ix.unitOf[inst] = unit
	}
}

// noteIntent keeps the intent a region's begin event states; a region's
// instances all state the same.
func (x *indexer) noteIntent(e *trace.Event) {
	if x.ix.intents == nil {
		x.ix.intents = make(map[trace.RegionID]Intent)
	}
	if _, ok := x.ix.intents[e.Region]; !ok {
		ev, from, to := e.Intent()
		x.ix.intents[e.Region] = Intent{Evidence: ev, From: from, To: to}
	}
}

// reserveAfter is the number of events after which a Prepass sizes its
// arrays from the trace's expected length.
const reserveAfter = 1 << 16

// expected returns the number of items of which seen came with the first
// n events, in a trace of total events, with a margin; 0 when the
// proportion is not known yet.
func expected(seen, n, total int) int {
	if n < reserveAfter || total <= n {
		return 0
	}
	return int(float64(seen) * float64(total) / float64(n) * 1.03)
}

// grownCap is the capacity reserve gives an array of capacity c that
// must hold want: at least double, so that estimates that creep up cost
// no more than append, and an eighth more than want, so that one sized
// from the whole trace is not outgrown by its variations.
func grownCap(want, c int) int { return max(want+want/8, 2*c) }

// add indexes the next events of the trace, which are its events from
// index x.n on.
func (x *indexer) add(events []trace.Event) {
	ix, h := x.ix, x.h
	for k := range events {
		if x.over {
			return // past the clocks' bound: the Prepass gives the index up
		}
		i := x.n + k
		e := &events[k]
		vc := h.Step(e)
		gi := h.Index(e.G)
		x.ensure(gi, e.G)
		switch e.Kind {
		case trace.KindAcquire, trace.KindRAcquire, trace.KindRelease, trace.KindRRelease:
			continue
		case trace.KindFork:
			ci := h.Index(trace.GoID(e.Arg))
			x.ensure(ci, trace.GoID(e.Arg))
			x.gs[ci].dirty = true
			if c := &x.gs[ci]; c.clock.h == 0 {
				c.clock, c.since = x.gs[gi].clock, x.gs[gi].since
			}
			continue
		case trace.KindEnd:
			x.load.end()
			if gi < len(x.keyTab) && x.keyTab[gi] != nil {
				clear(x.keyTab[gi])
				x.spareRows = append(x.spareRows, x.keyTab[gi])
				x.keyTab[gi] = nil
			}
			continue
		case trace.KindRead, trace.KindWrite:
		default:
			if learns(e.Kind) {
				x.gs[gi].dirty = true
			}
			if endsInstance(e.Kind) {
				x.gs[gi].waits++
			}
			switch e.Kind {
			case trace.KindRegionBegin:
				if e.Arg != 0 {
					x.noteIntent(e)
				}
				ev, _, _ := e.Intent()
				x.gs[gi].open = append(x.gs[gi].open, openInst{e.Region, e.Inst, ev.Confirms()})
			case trace.KindRegionEnd:
				if o := x.gs[gi].open; len(o) > 0 {
					x.gs[gi].open = o[:len(o)-1]
				}
			}
			continue
		}
		s := &x.gs[gi]
		if s.dirty {
			s.snap = uint32(len(ix.snaps))
			s.clock = ix.clocks.snapshotSince(s.clock, vc, h.Leaves(gi), s.since)
			s.since = h.Now()
			ix.snaps = append(ix.snaps, s.clock)
			s.dirty = false
		}
		var inst uint32
		if e.Region != 0 {
			iv := instValue(e.Inst, s.waits)
			if e.Region == s.lastR && iv == s.lastInst && s.lastInstI != 0 {
				inst = s.lastInstI
			} else {
				key := instKey{e.G, e.Region, iv}
				l := x.insts.list(e.G, e.Region)
				var pos int
				if inst, pos = l.find(iv); inst == 0 {
					inst = x.newInst(l, pos, key)
					x.setUnit(inst, key, s.open, s.waits)
				}
				s.lastR, s.lastInst, s.lastInstI = e.Region, iv, inst
			}
		}
		var vi uint32
		if e.Obj == x.lastObj && x.lastVar != ^uint32(0) {
			vi = x.lastVar
		} else {
			var ok bool
			vi, ok = ix.varOf[e.Obj]
			if !ok {
				vi = uint32(len(ix.vars))
				ix.varOf[e.Obj] = vi
				ix.vars = append(ix.vars, e.Obj)
				x.varCount = append(x.varCount, 0)
			}
			x.lastObj, x.lastVar = e.Obj, vi
		}
		x.varCount[vi]++
		for len(x.keyTab) <= gi {
			x.keyTab = append(x.keyTab, nil)
		}
		slot := 2 * int(e.Site)
		if e.Kind == trace.KindWrite {
			slot++
		}
		if x.keyTab[gi] == nil {
			x.keyTab[gi] = x.newRow()
		}
		if row := x.keyTab[gi]; len(row) <= slot {
			x.keyTab[gi] = append(row, make([]uint32, max(slot+1-len(row), 2*x.sites))...)
		}
		ki := x.keyTab[gi][slot]
		if ki == 0 {
			ix.keys = append(ix.keys, accKey{g: uint32(gi), site: e.Site, write: e.Kind == trace.KindWrite})
			ki = uint32(len(ix.keys))
			x.keyTab[gi][slot] = ki
		}
		ki--
		ix.acc = append(ix.acc, patAccess{
			key:   ki,
			ev:    uint32(i),
			g:     uint32(gi),
			write: e.Kind == trace.KindWrite,
			ep:    h.Epoch().C,
			snap:  s.snap,
			inst:  inst,
			v:     vi,
		})
	}
	x.n += len(events)
}

// reserve grows the index's array of accesses to what a trace of total
// events needs, judging by the events added so far, when that is more
// than it holds: the trace's array is sized once from the file, so this
// grows the index's once too, where append would copy it several times.
func (x *indexer) reserve(total int) {
	if want := expected(len(x.ix.acc), x.n, total); want > cap(x.ix.acc) {
		acc := make([]patAccess, len(x.ix.acc), grownCap(want, cap(x.ix.acc)))
		copy(acc, x.ix.acc)
		x.ix.acc = acc
		x.insts.reserve(x.n, total)
	}
}

// finish completes the index of trace t, all of whose events were added,
// with its lock states.
func (x *indexer) finish(t *trace.Trace, l *lockPass) *patIndex {
	ix := x.ix
	ix.t = t
	// The lock states, by goroutine in the clocks' numbering.
	ix.locks = l.locks
	for gi, g := range ix.gids {
		if li, ok := l.gIdx[g]; ok {
			ix.glog[gi] = l.glog[li]
		}
	}
	for ai := range ix.acc {
		ix.acc[ai].hist, ix.acc[ai].st = l.hist[ai], l.st[ai]
	}
	// Group the accesses by variable with one counting pass, so that
	// each variable's list is in trace order without a per-variable
	// allocation while scanning.
	flat := make([]uint32, len(ix.acc))
	ix.byVar = make([][]uint32, len(ix.vars))
	off := uint32(0)
	for v, n := range x.varCount {
		ix.byVar[v] = flat[off : off : off+n]
		off += n
	}
	for ai := range ix.acc {
		v := ix.acc[ai].v
		ix.byVar[v] = append(ix.byVar[v], uint32(ai))
	}
	return ix
}

// newLockPass returns a lockPass for a trace of about n reads and writes.
func newLockPass(n int) *lockPass {
	return &lockPass{locks: NewLocks(), gIdx: make(map[trace.GoID]int),
		hist: make([]HistoryID, 0, n), st: make([]uint32, 0, n), lastI: -1}
}

func (l *lockPass) index(g trace.GoID) int {
	if l.lastI >= 0 && g == l.lastG {
		return l.lastI
	}
	i, ok := l.gIdx[g]
	if !ok {
		i = len(l.glog)
		l.gIdx[g] = i
		l.glog = append(l.glog, []HistoryID{0})
	}
	l.lastG, l.lastI = g, i
	return i
}

// reserve is indexer.reserve for the lock states of the accesses.
func (l *lockPass) reserve(total int) {
	if want := expected(len(l.hist), l.n, total); want > cap(l.hist) {
		n := grownCap(want, cap(l.hist))
		l.hist = append(make([]HistoryID, 0, n), l.hist...)
		l.st = append(make([]uint32, 0, n), l.st...)
		// Each goroutine's log of lock states too: grown by append, the
		// logs' outgrown arrays were half of what they allocated.
		for gi, lg := range l.glog {
			if want := expected(len(lg), l.n, total); want > cap(lg) {
				l.glog[gi] = append(make([]HistoryID, 0, grownCap(want, cap(lg))), lg...)
			}
		}
	}
}

// add runs Locks over the next events of the trace.
func (l *lockPass) add(events []trace.Event) {
	l.n += len(events)
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case trace.KindAcquire, trace.KindRAcquire, trace.KindRelease, trace.KindRRelease:
			l.locks.Step(e)
			gi := l.index(e.G)
			l.glog[gi] = append(l.glog[gi], l.locks.History(e.G))
		case trace.KindRead, trace.KindWrite:
			gi := l.index(e.G)
			l.hist = append(l.hist, l.locks.History(e.G))
			l.st = append(l.st, uint32(len(l.glog[gi])-1))
		}
	}
}

// Prepass builds the pattern search's index while a trace is read: the
// clocks on the caller's goroutine, in Add, and the lock states on a
// goroutine of its own, so that reading, the clocks and the lock states
// share the machine's cores. Give it every event of the trace, in order,
// then pass it to PredictIndexed with the trace; or Close it to give up.
type Prepass struct {
	x      *indexer
	runs   chan []trace.Event
	done   chan *lockPass
	closed bool
	once   sync.Once
}

// prepassQueue is the number of runs of events the lock states may lag
// behind the clocks.
const prepassQueue = 64

// NewPrepass starts a Prepass. obj describes the trace's objects as far
// as they are known, for the channels' capacities: a reader's Object,
// which knows every object the events given to Add so far use.
func NewPrepass(obj func(trace.ObjID) trace.Object) *Prepass {
	p := &Prepass{
		x:    newIndexer(obj, 0),
		runs: make(chan []trace.Event, prepassQueue),
		done: make(chan *lockPass, 1),
	}
	go func() {
		l := newLockPass(0)
		for run := range p.runs {
			// A run is part of the trace's array, which ReadAllFunc
			// sizes from the file: its capacity tells the trace's
			// expected length.
			l.reserve(l.n + cap(run))
			l.add(run)
		}
		p.done <- l
	}()
	return p
}

// Add indexes the trace's next events. The lock states' goroutine reads
// them after Add returns: they must not change until the Prepass is
// finished or closed.
func (p *Prepass) Add(events []trace.Event) {
	if p.closed || len(events) == 0 {
		return
	}
	p.runs <- events
	p.x.reserve(p.x.n + cap(events))
	p.x.add(events)
	if p.x.over {
		// The trace passes the clocks' bound (SetClockBound): the
		// prediction will cover a prefix of it, indexed again then.
		// Going on would build the very clocks the bound is there to
		// spare: 14 GB for a bound of 4.
		// Closed, it builds the index again in finish; an empty
		// indexer lets what this one built go.
		p.Close()
		p.x = &indexer{}
	}
}

// SetClockBound has the Prepass give up, freeing what it built, once the
// trace passes ClockBound's bound of maxWords words of clocks: the
// prediction then covers the prefix within it, and indexes that again.
func (p *Prepass) SetClockBound(maxWords int64) { p.x.maxWords = maxWords }

// SetSites tells the Prepass how many sites the trace has, or about as
// many: a hint that sizes its tables.
func (p *Prepass) SetSites(n int) { p.x.sites = n }

// Close stops the Prepass's goroutine; PredictIndexed closes it too. It
// can be called more than once.
func (p *Prepass) Close() {
	p.once.Do(func() {
		p.closed = true
		close(p.runs)
		<-p.done
	})
}

// finish returns the index of t, whose events were all given to Add.
func (p *Prepass) finish(t *trace.Trace) *patIndex {
	var l *lockPass
	p.once.Do(func() {
		p.closed = true
		close(p.runs)
		l = <-p.done
	})
	if l == nil || p.x.n != len(t.Events) {
		// Closed before, or not given the whole trace: start over.
		return buildIndex(t)
	}
	return p.x.finish(t, l)
}
