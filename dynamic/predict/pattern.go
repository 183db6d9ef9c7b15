package predict

import (
	"cmp"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file is the pattern search of PECAN (Huang and Zhang, ISSTA 2011,
// shared/seeds/003_50220ead9b146295.txt): data races, the five
// unserializable triplets and atomic-set serializability violations
// (section 3), searched over an index of the trace by goroutine, variable
// and region (section 5.1) under the hybrid constraint of section 4.2: two
// events can be reordered when happens-before does not order them and their
// lock states allow them to be at the same time.
//
// Section 5.1 keeps the partial order only between thread-communication
// events and derives it for every other event on demand. Here the same idea
// takes the form of vector-clock snapshots: a goroutine's clock changes
// only at the synchronisation operations through which it learns something,
// so an access stores its epoch and the index of its goroutine's snapshot;
// and a snapshot shares with the one it is made from every component that
// has not changed (clocktree.go), so memory grows with the components such
// operations change, not with the number of events, nor of snapshots,
// times goroutines.
//
// Section 5.2 checks every candidate tuple of events. That is quadratic
// per variable and does not scale to traces of millions of events, so the
// search groups events by what a finding is made of, since findings are
// reported per combination of source sites anyway: an access by
// (goroutine, site, operation); a place between two accesses of a region
// instance to one variable by the sites and operations of the triplet it
// gives (a slot); a pair of accesses to two variables likewise. Within two
// groups the happens-before conditions are monotone along program order,
// so the members of one that can be reordered with a member of the other
// form an interval whose bounds only move forward; a galloping sweep finds
// them. Lock states are checked per pair, on the members nearest in the
// trace (the closest make the shortest witness), and a pair of groups stops
// once it has its representatives and maxInstances instances.
//
// Locks are not happens-before edges here: critical sections may be
// reordered, and lock states decide whether two points can coexist
// (Locks.Compatible: disjoint locksets and compatible acquisition histories,
// exact under nested locking for two goroutines). What the hybrid model
// still over-approximates the witness search (witness.go) settles.

// patAccess is one read or write of a variable in the index.
type patAccess struct {
	ev    uint32    // index of the event in Trace.Events
	g     uint32    // dense goroutine index
	write bool      // a write, not a read
	ep    uint32    // the goroutine's own clock component at the event
	snap  uint32    // the goroutine's clock snapshot at the event
	hist  HistoryID // the goroutine's lock state at the event
	inst  uint32    // dense region instance, 0 if outside every region
	st    uint32    // index into the goroutine's lock-state log at the event
	v     uint32    // dense variable index
	key   uint32    // dense accKey
}

// patIndex is PECAN's compact encoding of a trace (section 5.1).
type patIndex struct {
	t     *trace.Trace
	locks *Locks
	gids  []trace.GoID // dense goroutine index to GoID

	acc   []patAccess
	vars  []trace.ObjID          // dense variable index to ObjID
	varOf map[trace.ObjID]uint32 // ObjID to dense variable index
	byVar [][]uint32             // per dense variable, indices into acc in trace order

	clocks clockTree  // the nodes of the snapshots (clocktree.go)
	snaps  []clockRef // per snapshot, its tree

	glog [][]HistoryID // per goroutine, the lock states it went through

	keys    []accKey // dense accKey index to key
	numInst uint32   // region instances, numbered from 1
	lsMask  []lsBits // per LocksetID, its locks as bit sets (computeMasks)
	lockBit map[trace.ObjID]uint
	hBits   []histBits // per HistoryID, its lockset and acquisition histories as bit sets (computeMasks)
	// intents holds the intent of each region whose begin event states
	// one (trace.Event.Intent); a region missing here is unstated.
	intents map[trace.RegionID]Intent
	// evObjs holds, per position that a region's evidence names, the
	// objects its accesses reached (a few: evidenceObjects); a position
	// accessed only through a call (c.Get()) has none. Made at the first
	// use, under evOnce.
	evOnce sync.Once
	evObjs map[sitePos][]trace.ObjID
	// evPairs holds the positions of the two accesses of every region's
	// value evidence.
	evPairs map[[2]sitePos]bool
	// writeLocks holds, per variable, the locks every write of it holds
	// for writing (sectionGuards); made at the first use, under wlOnce.
	wlOnce     sync.Once
	writeLocks [][]trace.ObjID
	// outside holds the goroutines that trace.OutsideG forked, and
	// theirs (outsideOrder); made at the first use, under outOnce.
	outOnce sync.Once
	outside map[trace.GoID]bool
	// unitOf maps a region instance to the unit its accesses belong to
	// as the goroutine that interferes in an atomic-set violation
	// (indexer.setUnit); nil where every instance is its own unit.
	unitOf []uint32
	// guard holds, per variable, the locks that every access to it holds
	// for writing (computeGuards); anyGuard says some variable has one.
	guard    [][]trace.ObjID
	owned    []bool // per variable: one goroutine makes every access to it
	anyGuard bool
}

// intentOf returns the intent of region r.
func (ix *patIndex) intentOf(r trace.RegionID) Intent { return ix.intents[r] }

// maxHistBits is the most locks a lock state may hold for histBits to
// describe it; nesting deeper than that is rare, and compat takes the
// general way for it.
const maxHistBits = 4

// histBits is a lock state as bit sets over the first 64 locks of a
// trace, so that compat decides most pairs with a few AND operations and
// no lookups: the lockset, and per held lock the locks acquired after it
// while it was held (Locks.AcquiredAfter), split by the strongest mode
// they were taken in.
type histBits struct {
	ok         bool // computed and small enough: the fields below are the state
	write, any uint64
	n          uint8
	held       [maxHistBits]heldBits
}

// heldBits is one held lock of a histBits.
type heldBits struct {
	bit                  uint8
	write                bool   // held for writing
	afterAny, afterWrite uint64 // locks acquired after it: any mode, and for writing
}

// lsBits is a lockset as bit sets over the first 64 locks of a trace, so
// that the search's lockset checks are two AND operations.
type lsBits struct {
	known      bool
	big        bool // holds a lock beyond the first 64: use LocksetsConflict
	write, any uint64
}

// conflict reports whether two locksets exclude each other
// (Locks.Conflict, through bit sets). It only reads the index, so the
// search's workers can share it.
func (ix *patIndex) conflict(a, b LocksetID) bool {
	if a == 0 || b == 0 {
		return false
	}
	ma, mb := ix.mask(a), ix.mask(b)
	if !ma.known || !mb.known || ma.big || mb.big {
		return LocksetsConflict(ix.locks.Locks(a), ix.locks.Locks(b))
	}
	return ma.write&mb.any|ma.any&mb.write != 0
}

// mask returns the bit sets of a lockset computed by computeMasks.
func (ix *patIndex) mask(id LocksetID) lsBits {
	if int(id) < len(ix.lsMask) {
		return ix.lsMask[id]
	}
	return lsBits{}
}

// computeMasks computes the bit sets of every lockset and lock state the
// goroutines went through, before the search starts.
func (ix *patIndex) computeMasks() {
	ix.hBits = make([]histBits, ix.locks.idBound())
	done := make([]bool, ix.locks.idBound())
	for _, log := range ix.glog {
		for _, h := range log {
			if done[h] {
				continue
			}
			done[h] = true
			ix.hBits[h] = ix.histMask(h)
			id := ix.locks.HistoryLockset(h)
			for int(id) >= len(ix.lsMask) {
				ix.lsMask = append(ix.lsMask, lsBits{})
			}
			m := &ix.lsMask[id]
			if m.known {
				continue
			}
			m.known = true
			for _, h := range ix.locks.Locks(id) {
				bit, ok := ix.lockBit[h.Obj]
				if !ok {
					bit = uint(len(ix.lockBit))
					ix.lockBit[h.Obj] = bit
				}
				if bit >= 64 {
					m.big = true
					continue
				}
				m.any |= 1 << bit
				if h.Mode == ModeWrite {
					m.write |= 1 << bit
				}
			}
		}
	}
}

// bit returns the bit of a lock in the search's bit sets, numbering the
// locks as they come; ok is false past 64 locks.
func (ix *patIndex) bit(obj trace.ObjID) (uint8, bool) {
	b, ok := ix.lockBit[obj]
	if !ok {
		b = uint(len(ix.lockBit))
		ix.lockBit[obj] = b
	}
	return uint8(b), b < 64
}

// histMask describes lock state h as bit sets, or returns one that is not
// ok if it holds more than maxHistBits locks or a lock past the 64th.
func (ix *patIndex) histMask(h HistoryID) histBits {
	var m histBits
	l := ix.locks
	held := l.Locks(l.HistoryLockset(h))
	if len(held) > maxHistBits {
		return histBits{}
	}
	for _, p := range held {
		b, ok := ix.bit(p.Obj)
		if !ok {
			return histBits{}
		}
		hb := heldBits{bit: b, write: p.Mode == ModeWrite}
		m.any |= 1 << b
		if hb.write {
			m.write |= 1 << b
		}
		after, _ := l.AcquiredAfter(h, p.Obj)
		for _, q := range after.Holds() {
			qb, ok := ix.bit(q.Obj)
			if !ok {
				return histBits{}
			}
			hb.afterAny |= 1 << qb
			if q.Mode == ModeWrite {
				hb.afterWrite |= 1 << qb
			}
		}
		m.held[m.n] = hb
		m.n++
	}
	m.ok = true
	return m
}

// compatBits is compat on two lock states that histMask described: their
// locksets exclude each other, or some lock p of the first and q of the
// second were each taken, in a conflicting mode, while the other was held
// (the test of compat's general way, on bits).
func compatBits(a, b *histBits) bool {
	if a.write&b.any|a.any&b.write != 0 {
		return false
	}
	for _, p := range a.held[:a.n] {
		for _, q := range b.held[:b.n] {
			pq := p.afterWrite>>q.bit&1 != 0 || q.write && p.afterAny>>q.bit&1 != 0
			if pq && (q.afterWrite>>p.bit&1 != 0 || p.write && q.afterAny>>p.bit&1 != 0) {
				return false
			}
		}
	}
	return true
}

// site returns the source site of an access from its group key, which
// the index holds compactly, rather than from the event, which is a cache
// miss away in a long trace.
func (ix *patIndex) site(a *patAccess) trace.SiteID { return ix.keys[a.key].site }

// clk returns component gi of snapshot s.
func (ix *patIndex) clk(s uint32, gi uint32) uint32 {
	return ix.clocks.get(ix.snaps[s], gi)
}

// learns reports whether an event of kind k can join another clock into
// its goroutine's, so that a new snapshot is needed afterwards.
func learns(k trace.Kind) bool {
	switch k {
	case trace.KindRecv, trace.KindSend, trace.KindWGWait, trace.KindCondWait,
		trace.KindOnceDo, trace.KindAtomicLoad, trace.KindAtomicRMW:
		return true
	}
	return false
}

type instKey struct {
	g    trace.GoID
	r    trace.RegionID
	inst uint64
}

// buildIndex makes one pass over the trace with the happens-before and
// lockset engines of hb.go and locks.go: the clocks on this goroutine and
// the lock states on another (prepass.go has the two halves).
func buildIndex(t *trace.Trace) *patIndex {
	n := 0
	for i := range t.Events {
		if k := t.Events[i].Kind; k == trace.KindRead || k == trace.KindWrite {
			n++
		}
	}
	lp := make(chan *lockPass, 1)
	go func() {
		l := newLockPass(n)
		l.add(t.Events)
		lp <- l
	}()
	x := newIndexer(t.Object, n)
	x.sites = len(t.Sites)
	x.add(t.Events)
	return x.finish(t, <-lp)
}

// lockPass is the lock states of a trace's goroutines: their logs of
// states, and the state of each read and write, with its position in its
// goroutine's log.
type lockPass struct {
	locks *Locks
	gIdx  map[trace.GoID]int // goroutine to index in glog
	glog  [][]HistoryID      // per goroutine, the states it went through, from 0
	hist  []HistoryID        // per read or write, in trace order: its goroutine's state
	st    []uint32           // per read or write: the index of that state in glog
	lastG trace.GoID         // the goroutine of the last event, at glog index lastI
	lastI int
	n     int // events added
}

// gapStates returns the lock states goroutine gi passes through from
// access a up to (not including) access b, b later in its program order.
func (ix *patIndex) gapStates(gi uint32, a, b *patAccess) []HistoryID {
	return ix.glog[gi][a.st : b.st+1]
}

// compat is Locks.Compatible (disjoint locksets, compatible acquisition
// histories: Lemma 3 of seed 004, extended to read locks) computed from
// Locks' read-only accessors with the search's own cache, so that the
// search's workers need not share Locks' caches; the lockset test is done
// on bit sets first, since most pairs the search tries fail it.
func (s *patSearch) compat(a, b HistoryID) bool {
	if a == 0 || b == 0 {
		return true
	}
	if int(a) < len(s.ix.hBits) && int(b) < len(s.ix.hBits) {
		if ha, hb := &s.ix.hBits[a], &s.ix.hBits[b]; ha.ok && hb.ok {
			return compatBits(ha, hb)
		}
	}
	return s.compatSlow(a, b)
}

// compatSlow is compat for the lock states histMask does not describe.
func (s *patSearch) compatSlow(a, b HistoryID) bool {
	if a == 0 || b == 0 {
		return true
	}
	// The answer is symmetric: ask about the ordered pair.
	if a > b {
		a, b = b, a
	}
	// A direct-mapped table in front of everything: the search asks about
	// the same pairs over and over, and the lockset lookups and the map
	// were a sixth of its time.
	if s.compatFast == nil {
		// Small traces, such as the differential tests' thousands, ask
		// about few pairs: a small table spares allocating a large one
		// per search.
		bits := 8
		if len(s.ix.acc) > 1<<16 {
			bits = compatFastBits
		}
		s.compatFast, s.compatShift = make([]compatEntry, 1<<bits), uint(64-bits)
	}
	h := (uint64(a)<<32 | uint64(b)) * 0x9e3779b97f4a7c15
	slot := &s.compatFast[h>>s.compatShift]
	if slot.a == a && slot.b == b {
		return slot.ok
	}
	l := s.ix.locks
	la, lb := l.HistoryLockset(a), l.HistoryLockset(b)
	if s.ix.conflict(la, lb) {
		*slot = compatEntry{a, b, false}
		return false
	}
	key := [2]HistoryID{a, b}
	if c, ok := s.compatCache[key]; ok {
		*slot = compatEntry{a, b, c}
		return c
	}
	c := true
	for _, p := range l.Locks(la) {
		after, _ := l.AcquiredAfter(a, p.Obj)
		for _, q := range l.Locks(lb) {
			// The first took q while holding p, the second p while holding q.
			qa, ok := after.Find(q.Obj)
			if !ok || !conflicts(qa, q.Mode) {
				continue
			}
			afterB, _ := l.AcquiredAfter(b, q.Obj)
			if pb, ok := afterB.Find(p.Obj); ok && conflicts(pb, p.Mode) {
				c = false
			}
		}
	}
	s.compatCache[key] = c
	*slot = compatEntry{a, b, c}
	return c
}

// compatFastBits sizes compat's direct-mapped table on long traces: 128K
// entries, 1.5 MB per search worker.
const compatFastBits = 17

// compatEntry is one answer of compat's direct-mapped table; a, b = 0, 0
// is never looked up there (compat answers it first).
type compatEntry struct {
	a, b HistoryID
	ok   bool
}

// compatibleAny reports whether lock state h can coexist with some state
// in states.
func (s *patSearch) compatibleAny(states []HistoryID, h HistoryID) bool {
	for _, st := range states {
		if s.compat(st, h) {
			return true
		}
	}
	return false
}

// accKey groups accesses of one variable that are interchangeable for the
// search: same goroutine, site and operation. Lock states are checked per
// pair when representatives are chosen: keying on them too multiplies the
// groups by the locking patterns of the run, and the pairs of groups with
// them.
type accKey struct {
	g     uint32
	site  trace.SiteID
	write bool
}

// accGroup is the accesses of one accKey, in program order, with copies
// of the fields the sweeps compare, so that a sweep reads consecutive
// memory rather than one cache line of the index per member.
type accGroup struct {
	key  accKey
	ep   []uint32    // epochs of the accesses
	snap []uint32    // clock snapshots of the accesses
	ev   []uint32    // event indices of the accesses
	hist []HistoryID // lock states of the accesses
}

// patCand is a predicted finding with the events that realise it, best
// first, for the witness search to try.
type patCand struct {
	key  string // the site combination
	f    Finding
	reps [][]uint32 // each: the finding's events (indices into Trace.Events) in the order the finding needs them
	dist []uint64   // per rep, its span in the trace, to keep the closest
}

// maxReps bounds the alternative instances kept per finding for the
// witness search to try when the closest one cannot be scheduled.
const maxReps = 4

// mayOffer reports whether offer can keep an instance spanning d or more
// events: false once the candidate has maxReps representatives, all of
// them closer.
func (c *patCand) mayOffer(d uint64) bool {
	return len(c.reps) < maxReps || d < c.dist[maxReps-1]
}

func (c *patCand) offer(rep []uint32) {
	lo, hi := rep[0], rep[0]
	for _, r := range rep {
		lo, hi = min(lo, r), max(hi, r)
	}
	d := uint64(hi - lo)
	if len(c.reps) == maxReps && d >= c.dist[maxReps-1] {
		return
	}
	for _, r := range c.reps {
		if slices.Equal(r, rep) {
			return
		}
	}
	i := len(c.reps)
	for i > 0 && c.dist[i-1] > d {
		i--
	}
	c.reps = slices.Insert(c.reps, i, slices.Clone(rep))
	c.dist = slices.Insert(c.dist, i, d)
	if len(c.reps) > maxReps {
		c.reps, c.dist = c.reps[:maxReps], c.dist[:maxReps]
	}
}

// patSearch collects candidates keyed by their site combination. One
// patSearch is used by one goroutine; the index it reads is shared.
type patSearch struct {
	ix *patIndex
	// stop, when closed, ends run early (Options.Context); the workers
	// look at it between variables and chunks.
	stop        <-chan struct{}
	cands       map[string]*patCand
	order       []string
	key         []byte
	compatCache map[[2]HistoryID]bool
	compatFast  []compatEntry // direct-mapped, indexed by a hash's top bits, see compat
	compatShift uint          // 64 minus the bits of compatFast's index
	// Scratch for byInstance, indexed by instance.
	instCount []int32
	// The variable being searched (groupVar).
	vs varScratch
	// asvCands finds the atomic-set candidates of cands by their sites
	// (atomicSetCand).
	asvCands map[asvCandKey]*patCand
	asvFast  [1 << asvFastBits]asvFastEntry // in front of asvCands
	// The lock states of the atomic-set frame being matched (setGap), and
	// what compatGap has answered for them.
	gap    []HistoryID
	gapGen uint32 // generation of gap, 0 before the first
	// The goroutine and lock-state indices gap was last set from.
	gapG, gapSt1, gapSt2 uint32
	gapMemo              [gapMemoSize]gapAnswer
	// Scratch of overlapping.
	ovl overlapScratch
}

func (s *patSearch) get(key []byte, mk func() Finding) *patCand {
	c, ok := s.cands[string(key)]
	if !ok {
		c = &patCand{f: mk(), key: string(key)}
		s.cands[string(key)] = c
		s.order = append(s.order, string(key))
	}
	return c
}

// take returns the candidates found so far, in order of discovery, and
// forgets them.
func (s *patSearch) take() []*patCand {
	out := make([]*patCand, 0, len(s.order))
	for _, k := range s.order {
		out = append(out, s.cands[k])
	}
	clear(s.cands)
	clear(s.asvCands)
	clear(s.asvFast[:])
	s.order = s.order[:0]
	return out
}

// SearchPatterns runs the pattern search over a whole trace and returns the
// predicted races, unserializable triplets and atomic-set violations, one
// per combination of source sites, with Count the number of instances
// found and Accesses the closest instance. The findings are at
// LevelPredicted and have no witness yet.
func SearchPatterns(t *trace.Trace) []Finding {
	cs := searchCandidates(t)
	out := make([]Finding, len(cs))
	for i, c := range cs {
		out[i] = c.f
	}
	return out
}

func searchCandidates(t *trace.Trace) []*patCand {
	return newSearch(buildIndex(t)).run()
}

func newSearch(ix *patIndex) *patSearch {
	return &patSearch{ix: ix, cands: make(map[string]*patCand), compatCache: make(map[[2]HistoryID]bool)}
}

// run searches every variable and the atomic sets. The variables are
// independent and the index is only read, so they are searched by
// GOMAXPROCS workers, one patSearch each; meanwhile one goroutine groups
// the atomic sets' frames and inner pairs, and the workers then match them
// in chunks of frame groups. The results are merged in variable and chunk
// order, so the outcome does not depend on the schedule.
func (s *patSearch) run() []*patCand {
	const chunk = 64 // frame groups per atomic-set task
	ix := s.ix
	perVar := make([][]*patCand, len(ix.vars))
	ix.computeGuards()
	// The atomic-set index, the longest of the search's preparations,
	// starts first; it does not read the lock masks.
	var asv *asvIndex
	asvReady := make(chan struct{})
	go func() {
		asv = ix.asvIndex()
		close(asvReady)
	}()
	ix.computeMasks()
	var perChunk [][]*patCand
	var chunksOnce sync.Once
	var nextVar, nextChunk atomic.Int64
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newSearch(ix)
			for {
				v := int(nextVar.Add(1) - 1)
				if v >= len(ix.vars) || v%16 == 0 && stopped(s.stop) {
					break
				}
				groups := w.groupVar(ix.byVar[v])
				if !ix.guarded(uint32(v)) {
					w.races(v, groups)
				}
				w.triplets(v, groups, w.slots(ix.byVar[v]))
				perVar[v] = w.take()
			}
			<-asvReady
			// A task is the groups numbered from c*chunk on, of which
			// asv.outer holds those with frames.
			chunksOnce.Do(func() { perChunk = make([][]*patCand, (int(asv.groups)+chunk-1)/chunk) })
			for {
				c := int(nextChunk.Add(1) - 1)
				if c >= len(perChunk) || stopped(s.stop) {
					return
				}
				i, _ := slices.BinarySearchFunc(asv.outer, int32(c*chunk), func(g frameGroup, num int32) int { return cmp.Compare(g.num, num) })
				for ; i < len(asv.outer) && asv.outer[i].num < int32((c+1)*chunk); i++ {
					w.atomicSetOuter(asv, &asv.outer[i])
				}
				perChunk[c] = w.take()
			}
		}()
	}
	wg.Wait()
	if stopped(s.stop) {
		return nil
	}
	for _, cs := range append(perVar, perChunk...) {
		for _, c := range cs {
			s.merge(c)
		}
	}
	out := make([]*patCand, 0, len(s.order))
	for _, k := range s.order {
		c := s.cands[k]
		s.fill(c)
		out = append(out, c)
	}
	return out
}

// stopped reports whether stop is closed.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// merge adds a worker's candidate to s: one site combination can be found
// on several variables.
func (s *patSearch) merge(c *patCand) {
	old, ok := s.cands[c.key]
	if !ok {
		s.cands[c.key] = c
		s.order = append(s.order, c.key)
		return
	}
	old.f.Count += c.f.Count
	for _, r := range c.reps {
		old.offer(r)
	}
}

// varScratch is a search worker's memory for the variable it searches,
// reused from one variable to the next: per position in the variable's
// list of accesses, and the arrays its groups are cut from.
type varScratch struct {
	slot  []int32     // per accKey id, its group's number, -1 if none (between variables, all -1)
	which []int32     // per position, its group's number
	key   []uint32    // per position, its accKey id
	inst  []uint32    // per position, its region instance
	tmp   []uint32    // per position, its epoch, clock snapshot and event
	hist  []HistoryID // per position, its lock state
	count []int       // per group, its size
	// groups is groupVar's result: made anew per variable, the groups
	// were most of what the search allocated on a trace of many
	// variables (925 MB for 4,096 variables at 10M events).
	groups []accGroup
	keyOf  []uint32    // per group, its accKey id
	flat   []uint32    // the groups' ep, snap and ev
	hflat  []HistoryID // the groups' hist
	// byInstance's per-instance lists.
	order []uint32
	iflat []uint32
	iout  [][]uint32
	// slots' groups, their placements as found (each with its group's
	// number), and the array the groups' entries are cut from.
	slotOf  map[uint64]int32
	sgs     []slotGroup
	placed  []placedEntry
	entries []slotEntry
	// Per position of an instance's list, the nearest write at or
	// before it and at or after it (-1 if none), for slots.
	prevW, nextW []int32
}

// placedEntry is a slot entry with the number of its group, as slots
// finds them.
type placedEntry struct {
	sg int32
	en slotEntry
}

// resize returns b with length n, reusing its array when it is large
// enough; the elements are not cleared.
func resize[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n, n+n/4)
	}
	return b[:n]
}

// groupVar groups one variable's accesses (accs, indices into the index
// in trace order) by accKey, keeping the groups in order of first
// appearance, and notes each access's key and region instance by its
// position in accs, for slots. It reads each access from the index once
// (a cache miss each on a long trace) and copies what the groups, slots
// and sweeps need into the worker's scratch, so that they read
// consecutive memory. The groups' arrays are cut from one array per field
// type, sized by a counting pass; they last until the next variable.
func (s *patSearch) groupVar(accs []uint32) []accGroup {
	ix := s.ix
	vs := &s.vs
	if len(vs.slot) < len(ix.keys) {
		vs.slot = make([]int32, len(ix.keys))
		for i := range vs.slot {
			vs.slot[i] = -1
		}
	}
	n := len(accs)
	slot := vs.slot
	which := resize(vs.which, n)
	key := resize(vs.key, n)
	inst := resize(vs.inst, n)
	tmp := resize(vs.tmp, 3*n)
	hist := resize(vs.hist, n)
	count, keyOf := vs.count[:0], vs.keyOf[:0]
	groups := vs.groups[:0]
	for i, ai := range accs {
		a := &ix.acc[ai]
		k := a.key
		if slot[k] < 0 {
			slot[k] = int32(len(groups))
			groups = append(groups, accGroup{key: ix.keys[k]})
			count = append(count, 0)
			keyOf = append(keyOf, k)
		}
		which[i] = slot[k]
		count[slot[k]]++
		key[i], inst[i], hist[i] = k, a.inst, a.hist
		tmp[3*i], tmp[3*i+1], tmp[3*i+2] = a.ep, a.snap, a.ev
	}
	flat := resize(vs.flat, 3*n)
	hflat := resize(vs.hflat, n)
	off, hoff := 0, 0
	for i := range groups {
		n := count[i]
		gr := &groups[i]
		gr.ep = flat[off : off : off+n]
		gr.snap = flat[off+n : off+n : off+2*n]
		gr.ev = flat[off+2*n : off+2*n : off+3*n]
		gr.hist = hflat[hoff : hoff : hoff+n]
		off += 3 * n
		hoff += n
	}
	for i := range accs {
		gr := &groups[which[i]]
		gr.ep = append(gr.ep, tmp[3*i])
		gr.snap = append(gr.snap, tmp[3*i+1])
		gr.ev = append(gr.ev, tmp[3*i+2])
		gr.hist = append(gr.hist, hist[i])
	}
	for _, k := range keyOf {
		slot[k] = -1
	}
	vs.which, vs.key, vs.inst, vs.tmp, vs.hist = which, key, inst, tmp, hist
	vs.count, vs.keyOf, vs.flat, vs.hflat, vs.groups = count, keyOf, flat, hflat, groups
	return groups
}

func opLetter(write bool) string {
	if write {
		return "W"
	}
	return "R"
}

// races finds the data races on one variable: conflicting accesses of two
// goroutines that happens-before does not order and whose lock states can
// coexist, so that some interleaving runs them back to back (section 3,
// "Data race"; Algorithm 1's condition with acquisition histories added).
func (s *patSearch) races(v int, groups []accGroup) {
	if len(groups) >= sweepMin {
		if pairs, ok := s.overlapping(groups); ok {
			for _, p := range pairs {
				s.racePairs(v, &groups[p>>32], &groups[uint32(p)])
			}
			return
		}
	}
	for i := range groups {
		for j := i + 1; j < len(groups); j++ {
			g1, g2 := &groups[i], &groups[j]
			if g1.key.g == g2.key.g || !(g1.key.write || g2.key.write) {
				continue
			}
			s.racePairs(v, g1, g2)
		}
	}
}

// sweepMin is the number of groups of a variable from which races finds
// the pairs of groups that can overlap by a sweep (overlapping) rather
// than by trying every pair.
var sweepMin = 64

// sweepBack is how many groups back overlapping looks for a group that
// happens before the one at hand; sweepActive bounds the list of
// earlier groups that it keeps for a group.
const (
	sweepBack   = 64
	sweepActive = 256
	sweepPairs  = 1 << 20
)

type overlapScratch struct {
	ring  [sweepBack][]int32 // the lists of the last sweepBack spans
	full  [sweepBack]bool    // whose list was too long to keep
	cur   []int32
	pairs []uint64
	spans []ovlSpan
	order []int32
	tests int // the pairs of spans tested so far, for the tests
}

// ovlSpan is what overlapSpans compares of a run of one goroutine's
// accesses: the first access's event and clock snapshot, and the last
// one's epoch.
type ovlSpan struct {
	g      uint32
	ev0    uint32
	snap0  uint32
	lastEp uint32
}

func groupSpan(g *accGroup) ovlSpan {
	return ovlSpan{g: g.key.g, ev0: g.ev[0], snap0: g.snap[0], lastEp: g.ep[len(g.ep)-1]}
}

// overlapping returns the pairs of groups (i<<32 | j, i < j, in that
// order) of two goroutines, one of them writing, of which i does not
// happen before j's first access: the pairs that racePairs does not
// dismiss at once, and, with thousands of short-lived goroutines on a
// variable, a few of the goroutines squared. The groups must be in the
// order of their first accesses, and the pairs at most sweepPairs; ok is
// false if they are not (races then tries every pair, as for fewer
// groups, without holding them).
func (s *patSearch) overlapping(groups []accGroup) (pairs []uint64, ok bool) {
	sc := &s.ovl
	if !slices.ContainsFunc(groups, func(g accGroup) bool { return g.key.write }) {
		return sc.pairs[:0], true // no race without a write
	}
	spans := sc.spans[:0]
	for i := range groups {
		spans = append(spans, groupSpan(&groups[i]))
	}
	sc.spans = spans
	return s.overlapSpans(spans, len(spans)*(len(spans)-1)/2, func(i, j int) bool {
		gi, gj := &groups[i].key, &groups[j].key
		return gi.g != gj.g && (gi.write || gj.write)
	})
}

// overlapSpans returns the pairs of spans (i<<32 | j, i < j, in that
// order) that keep(i, j) accepts and of which i does not happen before
// j's first access (i's last epoch within the clock of j's first
// access). j cannot happen before i: it starts later in the trace. The
// spans must be in the order of their first accesses, the pairs at most
// sweepPairs, and the pairs of spans tested at most budget (the pairs
// its caller would try without the sweep: where everything overlaps, the
// sweep saves nothing); ok is false if they are not.
//
// The test "i before j" is transitive through a span k of another
// goroutine than j's: k's last epoch within j's clock means k's whole
// clock there is, which holds the clock of k's first access. So if k
// happens before j, the spans that do not happen before j are among
// those that do not happen before k and those after k: a span's list
// comes from that of a recent span before it, not from every span, and
// a goroutine's span that follows a chain of others (a pool's tasks,
// each started once the last is done) is tested against a few. When no
// such k is near, or its list was too long to keep, every earlier span
// is tested.
func (s *patSearch) overlapSpans(spans []ovlSpan, budget int, keep func(i, j int) bool) (pairs []uint64, ok bool) {
	ix := s.ix
	sc := &s.ovl
	limit := sc.tests + budget
	before := func(i, j int) bool {
		sc.tests++
		return spans[i].lastEp <= ix.clk(spans[j].snap0, spans[i].g)
	}
	pairs = sc.pairs[:0]
	for j := range spans {
		if j > 0 && spans[j].ev0 < spans[j-1].ev0 {
			return nil, false
		}
		base := -1
		for k := j - 1; k >= max(0, j-sweepBack); k-- {
			if !sc.full[k%sweepBack] && spans[k].g != spans[j].g && before(k, j) {
				base = k
				break
			}
		}
		cur := sc.cur[:0]
		try := func(i int) {
			if !before(i, j) {
				cur = append(cur, int32(i))
			}
		}
		if base < 0 {
			for i := range j {
				try(i)
			}
		} else {
			for _, i := range sc.ring[base%sweepBack] {
				try(int(i))
			}
			for i := base + 1; i < j; i++ {
				try(i)
			}
		}
		for _, i := range cur {
			if keep(int(i), j) {
				pairs = append(pairs, uint64(i)<<32|uint64(j))
			}
		}
		if len(pairs) > sweepPairs || sc.tests > limit {
			sc.pairs = pairs[:0]
			return nil, false
		}
		r := j % sweepBack
		sc.full[r] = len(cur) > sweepActive
		if !sc.full[r] {
			sc.ring[r] = append(sc.ring[r][:0], cur...)
		}
		sc.cur = cur
	}
	slices.Sort(pairs)
	sc.pairs = pairs
	return pairs, true
}

// racePairs sweeps two groups of one variable for unordered pairs. For an
// access b of the second group, the accesses a of the first with "a does
// not happen before b" are a suffix (a's epoch above b's clock), and those
// with "b does not happen before a" a prefix; both bounds only move
// forward as b does. Within the bounds, the members nearest to b in the
// trace whose lock states can coexist with b's become representatives.
func (s *patSearch) racePairs(v int, g1, g2 *accGroup) {
	ix := s.ix
	lo, hi := 0, 0
	var c *patCand
	ga, gb := g1.key.g, g2.key.g
	if n1, n2 := len(g1.ep), len(g2.ep); n1 == 0 || n2 == 0 ||
		g1.ep[n1-1] <= ix.clk(g2.snap[0], ga) || g2.ep[n2-1] <= ix.clk(g1.snap[0], gb) {
		// One group happens before the other's first access (a
		// goroutine that ended before the other began): no pair, and
		// with thousands of short-lived goroutines on a variable, most
		// pairs of groups are such.
		return
	}
	for j := range g2.ep {
		if c != nil && c.f.Count >= maxInstances && len(c.reps) == maxReps {
			return
		}
		bEp, bEv, bHist := g2.ep[j], g2.ev[j], g2.hist[j]
		// a happens before b when a's epoch is within b's clock.
		cb := ix.clk(g2.snap[j], ga)
		for lo < len(g1.ep) && g1.ep[lo] <= cb {
			lo++
		}
		if hi < lo {
			hi = lo
		}
		for hi < len(g1.ep) && bEp > ix.clk(g1.snap[hi], gb) {
			hi++
		}
		if lo >= hi {
			continue
		}
		k := lo + sortSearch(hi-lo, func(k int) bool { return g1.ev[lo+k] > bEv })
		found := 0
		nearest(lo, hi, k, func(m int) bool {
			if !s.compat(g1.hist[m], bHist) {
				return false
			}
			first, second := &g1.key, &g2.key
			e1, e2 := g1.ev[m], bEv
			if e1 > e2 {
				first, second, e1, e2 = second, first, e2, e1
			}
			if c == nil {
				c = s.raceCand(first, second)
			}
			c.offer([]uint32{e1, e2})
			found++
			return found == 2
		})
		if found > 0 {
			c.f.Count++
		}
	}
}

// maxNearest bounds how many members of a group around the closest one
// are tried as representatives of one instance.
const maxNearest = 16

// nearest calls try on the indices of [lo, hi) from k outwards (k-1, k,
// k-2, k+1, ...), at most maxNearest of them, until try returns true.
func nearest(lo, hi, k int, try func(int) bool) {
	l, r := k-1, k
	for n := 0; n < maxNearest && (l >= lo || r < hi); n++ {
		if l >= lo && (r >= hi || n%2 == 0) {
			if try(l) {
				return
			}
			l--
			continue
		}
		if try(r) {
			return
		}
		r++
	}
}

// raceCand returns the candidate of a race between accesses of the keys
// first and second, in that trace order.
func (s *patSearch) raceCand(first, second *accKey) *patCand {
	s.key = s.key[:0]
	s.key = append(s.key, 'r')
	s1, s2 := first.site, second.site
	w1, w2 := first.write, second.write
	if s1 > s2 || s1 == s2 && w1 && !w2 {
		s1, s2, w1, w2 = s2, s1, w2, w1
	}
	s.key = binary.AppendUvarint(s.key, uint64(s1))
	s.key = append(s.key, opLetter(w1)[0])
	s.key = binary.AppendUvarint(s.key, uint64(s2))
	s.key = append(s.key, opLetter(w2)[0])
	return s.get(s.key, func() Finding {
		return Finding{Kind: KindRace, Level: LevelPredicted,
			Pattern: opLetter(first.write) + "-" + opLetter(second.write)}
	})
}

// gallop returns the first index in [from, n) where pred holds, or n;
// pred must be false then true over [from, n). It probes from, from+1,
// from+3, ... and then bisects, so a sweep whose bound moves a little at a
// time reads neighbouring elements, and one whose bound jumps costs a
// logarithm.
func gallop(from, n int, pred func(int) bool) int {
	if from >= n || pred(from) {
		return from
	}
	prev, step := from, 1
	for {
		next := prev + step
		if next >= n {
			return prev + 1 + sortSearch(n-prev-1, func(k int) bool { return pred(prev + 1 + k) })
		}
		if pred(next) {
			return prev + 1 + sortSearch(next-prev-1, func(k int) bool { return pred(prev + 1 + k) })
		}
		prev = next
		step *= 2
	}
}

// sortSearch is sort.Search without the import, for the sweeps.
func sortSearch(n int, f func(int) bool) int {
	i, j := 0, n
	for i < j {
		h := int(uint(i+j) >> 1)
		if !f(h) {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// slot is one way to place an access f of another goroutine inside a
// region instance: between the instance's accesses i and i+1 of a
// variable, for f a write or a read. The triplet it gives is canonical:
// e1 is the last access at or before i that conflicts with f and e2 the
// first at or after i+1. Any unserializable e1'-f-e2' around that
// placement has these between its accesses, so nothing is lost, and the
// report names the accesses that actually conflict.
type slotKey struct {
	g              uint32
	s1, s2         trace.SiteID
	w1, w2, fWrite bool
}

// slotEntry is one instance of a slot: the accesses around the placement
// (for the happens-before checks) and the triplet's e1 and e2.
type slotEntry struct {
	ai, aj, e1, e2 uint32
}

type slotGroup struct {
	key     slotKey
	entries []slotEntry // in program order
	n       int         // the number of entries, while slots counts them
}

// byInstance splits the accesses of the variable groupVar last grouped
// that are in region instances into one list per instance, in order of the
// instances' first accesses, each access by its position; without a map:
// two passes over one per-instance array, which holds each instance's
// count of accesses, then its list's position, then 0 again.
func (s *patSearch) byInstance() [][]uint32 {
	ix := s.ix
	vs := &s.vs
	if cap(s.instCount) < int(ix.numInst)+1 {
		s.instCount = make([]int32, ix.numInst+1)
	}
	count := s.instCount[:ix.numInst+1]
	order := vs.order[:0]
	total := 0
	for _, in := range vs.inst {
		if in == 0 {
			continue
		}
		if count[in] == 0 {
			order = append(order, in)
		}
		count[in]++
		total++
	}
	flat := resize(vs.iflat, total)
	out := resize(vs.iout, len(order))
	off := int32(0)
	for k, in := range order {
		out[k] = flat[off : off : off+count[in]]
		off += count[in]
		count[in] = int32(k)
	}
	for i, in := range vs.inst {
		if in != 0 {
			out[count[in]] = append(out[count[in]], uint32(i))
		}
	}
	for _, in := range order {
		count[in] = 0
	}
	vs.order, vs.iflat, vs.iout = order, flat, out
	return out
}

// slots groups the placements of the region instances of the variable
// whose accesses, accs, groupVar last grouped. The groups and their
// entries are laid out in the worker's scratch, and last until the next
// variable.
func (s *patSearch) slots(accs []uint32) []slotGroup {
	ix := s.ix
	vs := &s.vs
	key := vs.key
	// A slot's key is determined by the access keys of e1 and e2 (which
	// hold its goroutine, sites and operations) and f's operation, which
	// pack into one integer: hashing it is cheaper than hashing slotKey.
	if vs.slotOf == nil {
		vs.slotOf = make(map[uint64]int32)
	}
	clear(vs.slotOf)
	sgs, placed := vs.sgs[:0], vs.placed[:0]
	for _, l := range s.byInstance() {
		// The nearest writes around each position, so that finding a
		// placement's writes costs no walk through a long run of reads.
		prevW, nextW := resize(vs.prevW, len(l)), resize(vs.nextW, len(l))
		vs.prevW, vs.nextW = prevW, nextW
		last := int32(-1)
		for k := range l {
			if ix.keys[key[l[k]]].write {
				last = int32(k)
			}
			prevW[k] = last
		}
		last = -1
		for k := len(l) - 1; k >= 0; k-- {
			if ix.keys[key[l[k]]].write {
				last = int32(k)
			}
			nextW[k] = last
		}
		for i := 0; i+1 < len(l); i++ {
			// A placement its goroutine holds a guard of the variable
			// across has no access to interleave (guards.go); its group
			// is made all the same, so that the groups come in the same
			// order.
			ai, aj := &ix.acc[accs[l[i]]], &ix.acc[accs[l[i+1]]]
			dead := ix.gapHolds(ai.g, ai.st, aj.st, ai.v, ai.v)
			for _, fw := range [2]bool{true, false} {
				e1, e2 := i, i+1
				if !fw {
					e1, e2 = int(prevW[i]), int(nextW[i+1])
				}
				if e1 < 0 || e2 < 0 {
					continue
				}
				k1, k2 := key[l[e1]], key[l[e2]]
				pk := uint64(k1)<<33 | uint64(k2)<<1
				if fw {
					pk |= 1
				}
				sg, ok := vs.slotOf[pk]
				if !ok {
					sg = int32(len(sgs))
					vs.slotOf[pk] = sg
					a1, a2 := &ix.keys[k1], &ix.keys[k2]
					sgs = append(sgs, slotGroup{key: slotKey{g: ix.keys[key[l[i]]].g, s1: a1.site, s2: a2.site,
						w1: a1.write, w2: a2.write, fWrite: fw}})
				}
				if !dead {
					placed = append(placed, placedEntry{sg, slotEntry{accs[l[i]], accs[l[i+1]], accs[l[e1]], accs[l[e2]]}})
				}
			}
		}
	}
	// Lay the groups' entries out in one array, each group's in the
	// order found, which is program order.
	for _, p := range placed {
		sgs[p.sg].n++
	}
	entries := resize(vs.entries, len(placed))
	off := 0
	for i := range sgs {
		n := sgs[i].n
		sgs[i].entries = entries[off : off : off+n]
		off += n
	}
	for _, p := range placed {
		sg := &sgs[p.sg]
		sg.entries = append(sg.entries, p.en)
	}
	vs.sgs, vs.placed, vs.entries = sgs, placed, entries
	return sgs
}

// maxInstances caps the instances counted per pair of groups: past it,
// and once the finding has its representatives, the search of the pair
// stops, so a pattern repeated through a long trace costs no more than a
// rare one. Finding.Count is then a lower bound.
const maxInstances = 1000

// triplets finds the unserializable triplets on one variable: two accesses
// e1, e2 of one region instance and an access f of another goroutine that
// can run between them (section 3, "Atomicity violation"; the mutation
// condition of Algorithm 2, with lock states in place of locksets).
func (s *patSearch) triplets(v int, groups []accGroup, slots []slotGroup) {
	if len(slots)+len(groups) >= sweepMin {
		if pairs, ok := s.slotPairs(groups, slots); ok {
			for _, p := range pairs {
				s.tripletPairs(&slots[p>>32], &groups[uint32(p)])
			}
			return
		}
	}
	for i := range slots {
		sg := &slots[i]
		if len(sg.entries) == 0 {
			// Every placement of the group is across a guard: nothing
			// to match, and a goroutine's groups against every other
			// goroutine's are goroutines squared.
			continue
		}
		for gi := range groups {
			fg := &groups[gi]
			if fg.key.g == sg.key.g || fg.key.write != sg.key.fWrite {
				continue
			}
			s.tripletPairs(sg, fg)
		}
	}
}

// slotPairs returns the pairs of a slot group with entries and a group
// of f accesses (slot<<32 | group, in that order) that tripletPairs does
// not dismiss at once: of two goroutines, f's operation the slot's, and
// neither the slot's entries all before every f nor every f before them.
// With thousands of short-lived goroutines on a variable, trying every
// pair is the goroutines squared; overlapSpans sweeps them, the slot
// groups spanning their entries' accesses from the first to the last.
func (s *patSearch) slotPairs(groups []accGroup, slots []slotGroup) (pairs []uint64, ok bool) {
	ix := s.ix
	sc := &s.ovl
	spans, order := sc.spans[:0], sc.order[:0]
	// Only slots whose f operation some group has, and groups of an
	// operation some slot wants, can pair: a variable that thousands of
	// goroutines read at once and none writes has no slot to match.
	var groupsOf, slotsOf [2]int // by operation: 1 for a write
	for i := range groups {
		groupsOf[b2i(groups[i].key.write)]++
	}
	for i := range slots {
		if len(slots[i].entries) > 0 {
			slotsOf[b2i(slots[i].key.fWrite)]++
		}
	}
	// order holds, for each span, the slot's index, or -1 - the group's.
	for i := range slots {
		sg := &slots[i]
		if len(sg.entries) == 0 || groupsOf[b2i(sg.key.fWrite)] == 0 {
			continue
		}
		sp := ovlSpan{g: sg.key.g, ev0: math.MaxUint32}
		for _, en := range sg.entries {
			ai, aj := &ix.acc[en.ai], &ix.acc[en.aj]
			if ai.ev < sp.ev0 {
				sp.ev0, sp.snap0 = ai.ev, ai.snap
			}
			sp.lastEp = max(sp.lastEp, aj.ep)
		}
		spans = append(spans, sp)
		order = append(order, int32(i))
	}
	for i := range groups {
		if len(groups[i].ep) > 0 && slotsOf[b2i(groups[i].key.write)] > 0 {
			spans = append(spans, groupSpan(&groups[i]))
			order = append(order, -1-int32(i))
		}
	}
	// Sorted together by first access; order follows its span.
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(spans[a].ev0, spans[b].ev0) })
	sorted, sortedOrder := make([]ovlSpan, len(spans)), make([]int32, len(spans))
	for k, i := range idx {
		sorted[k], sortedOrder[k] = spans[i], order[i]
	}
	sc.spans, sc.order = sorted, sortedOrder
	keep := func(i, j int) bool {
		a, b := sortedOrder[i], sortedOrder[j]
		if a >= 0 == (b >= 0) {
			return false // two slots, or two groups
		}
		if b >= 0 {
			a, b = b, a
		}
		sg, fg := &slots[a], &groups[-1-b]
		return sg.key.g != fg.key.g && fg.key.write == sg.key.fWrite
	}
	ps, ok := s.overlapSpans(sorted, slotsOf[0]*groupsOf[0]+slotsOf[1]*groupsOf[1], keep)
	if !ok {
		return nil, false
	}
	for k, p := range ps {
		a, b := sortedOrder[p>>32], sortedOrder[uint32(p)]
		if b >= 0 {
			a, b = b, a
		}
		ps[k] = uint64(a)<<32 | uint64(-1-b)
	}
	slices.Sort(ps)
	return ps, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tripletPairs matches the entries of a slot group against a group of f
// accesses. For an entry, the f that are not after its access i+1 form a
// prefix of the group and those not before its access i a suffix; both
// bounds only move forward along the entries, which are in program order,
// so galloping from the previous bounds finds them.
func (s *patSearch) tripletPairs(sg *slotGroup, fg *accGroup) {
	ix := s.ix
	var c *patCand
	n := len(fg.ep)
	lo, hi := 0, 0
	if first, last := &sg.entries[0], &sg.entries[len(sg.entries)-1]; n == 0 ||
		fg.ep[n-1] <= ix.clk(ix.acc[first.ai].snap, fg.key.g) ||
		ix.acc[last.aj].ep <= ix.clk(fg.snap[0], ix.acc[last.aj].g) {
		// Every f happens before the first entry's access i, or the
		// last entry's access i+1 before every f (goroutines that do
		// not overlap): the bounds below would leave nothing.
		return
	}
	for _, en := range sg.entries {
		if c != nil && c.f.Count >= maxInstances && len(c.reps) == maxReps {
			return
		}
		ai, aj := &ix.acc[en.ai], &ix.acc[en.aj]
		// f must not happen before access i...
		ci := ix.clk(ai.snap, fg.key.g)
		lo = gallop(lo, n, func(k int) bool { return fg.ep[k] > ci })
		hi = max(hi, lo)
		// ...and access i+1 must not happen before f.
		g1 := aj.g
		hi = gallop(hi, n, func(k int) bool { return aj.ep <= ix.clk(fg.snap[k], g1) })
		if lo >= hi {
			continue
		}
		gap := ix.gapStates(ai.g, ai, aj)
		k := lo + sortSearch(hi-lo, func(k int) bool { return fg.ev[lo+k] > ai.ev })
		found := 0
		nearest(lo, hi, k, func(m int) bool {
			if !s.compatibleAny(gap, fg.hist[m]) {
				return false
			}
			if c == nil {
				key := &sg.key
				s.key = s.key[:0]
				s.key = append(s.key, 't')
				s.key = binary.AppendUvarint(s.key, uint64(key.s1))
				s.key = append(s.key, opLetter(key.w1)[0])
				s.key = binary.AppendUvarint(s.key, uint64(fg.key.site))
				s.key = append(s.key, opLetter(fg.key.write)[0])
				s.key = binary.AppendUvarint(s.key, uint64(key.s2))
				s.key = append(s.key, opLetter(key.w2)[0])
				c = s.get(s.key, func() Finding {
					return Finding{Kind: KindAtomicity, Level: LevelPredicted,
						Pattern: opLetter(key.w1) + "-" + opLetter(fg.key.write) + "-" + opLetter(key.w2)}
				})
			}
			c.offer([]uint32{ix.acc[en.e1].ev, fg.ev[m], ix.acc[en.e2].ev})
			found++
			return found == 2
		})
		if found > 0 {
			c.f.Count++
		}
	}
}

// fill sets a candidate's Var and Accesses from its closest instance.
func (s *patSearch) fill(c *patCand) {
	setAccesses(s.ix.t, &c.f, c.reps[0])
	if c.f.Kind == KindRace {
		// One site pair can race in either trace order; name the pattern
		// after the instance shown.
		c.f.Pattern = opLetter(c.f.Accesses[0].Op == trace.KindWrite) + "-" + opLetter(c.f.Accesses[1].Op == trace.KindWrite)
	}
}

// setAccesses describes the events rep of a finding in f.Accesses, with
// the roles its kind gives them.
func setAccesses(t *trace.Trace, f *Finding, rep []uint32) {
	var roles []string
	switch f.Kind {
	case KindRace:
		roles = []string{"access", "access"}
	case KindAtomicity:
		roles = []string{"first", "interleaved", "last"}
	case KindAtomicSet:
		roles = []string{"first", "interleaved", "interleaved", "last"}
	}
	f.Accesses = f.Accesses[:0]
	for i, ev := range rep {
		e := &t.Events[ev]
		f.Accesses = append(f.Accesses, Access{
			Seq: e.Seq, G: e.G, Op: e.Kind, Obj: e.Obj, Site: e.Site, Role: roles[i],
		})
	}
	f.Var = findingVarName(t, t.Events[rep[0]].Obj)
	if f.Kind == KindAtomicSet {
		f.Var += ", " + findingVarName(t, t.Events[rep[len(rep)-1]].Obj)
	}
}

// findingVarName names a variable for a report: its name in the object table, or
// its id.
func findingVarName(t *trace.Trace, id trace.ObjID) string {
	if n := t.Object(id).Name; n != "" {
		return n
	}
	return "0x" + uitoa16(uint64(id))
}

func uitoa16(x uint64) string {
	const digits = "0123456789abcdef"
	if x == 0 {
		return "0"
	}
	var b [16]byte
	i := len(b)
	for x > 0 {
		i--
		b[i] = digits[x&15]
		x >>= 4
	}
	return string(b[i:])
}
