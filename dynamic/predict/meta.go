package predict

import (
	"cmp"
	"errors"
	"io"
	"slices"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file implements the meta-analysis of Farzan, Madhusudan and
// Sorrentino (shared/seeds/004_4018321f03831e38.txt): given one run, is
// there another interleaving of it, respecting locks, in which an access f
// of one goroutine falls between two accesses e1, e2 of one transaction of
// another goroutine, all three on one variable, with e1 D f D e2 (a
// minimal serializability violation, section 2.1)?
//
// Theorem 1 (section 3) reduces this to pairwise reachability: the triple
// is realisable iff some event e of the transaction with e1 <= e < e2 can
// be "at the same time" as f, which under nested locking holds iff their
// locksets are disjoint and their acquisition histories compatible
// (Lemma 3, Kahlon et al.; locks.go). Section 4 turns that into Phase I,
// which summarises each goroutine's witnesses e (sandwiched between two
// accesses of a transaction) and f (accesses) by lock state, and Phase II,
// which pairs compatible summaries.
//
// avcheck extends the algorithm in two ways the paper leaves open:
//
//   - Happens-before. Fork, channels, WaitGroup, Cond, Once and atomics
//     (hb.go, without lock edges) order events that no interleaving may
//     swap. For e to be "at the same time" as f we also need that f does
//     not happen before e (f runs after e) and that the event after e does
//     not happen before f (the goroutine can be stopped right after e).
//     Both conditions are monotone along a goroutine, so of all witnesses
//     with one lock state the latest one before f in the trace is the best
//     against the second, and of all f with one lock state the latest one
//     before e is the best against the first. The two phases therefore run
//     interleaved and online: whichever of e and f comes second in the
//     trace is checked against the summary of the first (see caseA and
//     caseB), and Phase II's pairs are the pending matches resolved when
//     e2 arrives.
//   - Every violation. Section 5 remarks that the tool reports one
//     representative per pair of lock states and that all could be
//     enumerated. Here a violation is reported once per source-site triple
//     (e1, f, e2) with its access kinds, which is what a programmer fixes.
//
// Memory: per variable, one record per distinct (goroutine, site, kind,
// lock state) of f and one summary per distinct (goroutine, e1 site, e2
// site) of closed windows, holding the lock states of its witnesses; per
// goroutine, the intervals of its current transaction (one per lock or
// synchronisation operation inside it); plus the distinct triples found.
// A lock state that another state covers (compatible with everything it
// is compatible with, Locks.Covers) is useless once the covering state has
// a later access (for f) or a later successor (in a summary), so it is
// forgotten; the empty lock state covers every other. The table of lock
// states itself would still grow along the run, since an outer lock's
// acquisition history gains every lock taken inside it (16 locks nested up
// to 3 deep at random meet 330,000 distinct states in 10M events), so from
// time to time the states no record holds are forgotten and their ids
// reused (collect). On that benchmark the live heap then stays between 13
// and 18 MB from 1M to 10.8M events, with about 2,000 f records and 2,144
// summaries throughout.

// Atomic operations are both accesses (they can be e1, f or e2, with their
// own kinds in the triple) and synchronisation (hb.go).
//
// Exactness. With two goroutines, locks only and a deadlock-free run this
// is Theorem 1. The tests compare the reported triples with exhaustive
// enumeration of the interleavings that respect program order, locks and
// happens-before, on thousands of random traces of two and three
// goroutines with nested Mutex and RWMutex locking, regions, channels,
// WaitGroups and atomics, and they agree exactly when every
// synchronisation operation happens outside critical sections. What is not
// modelled is a lock held across an operation that orders the two
// goroutines: if goroutine 1 holds m while it runs "go g()", g's critical
// section on m must wait for 1's release, which Kahlon's condition (stated
// for goroutines that run from the start) does not see; such a trace can
// yield a triple that no interleaving realises (a false positive, never a
// miss). Like the paper, the analysis assumes that the run is
// deadlock-free.

// MetaOptions configures Meta.
type MetaOptions struct {
	// Object describes object ids (channel capacities for happens-before,
	// variable names for findings); typically trace.Reader.Object.
	Object func(trace.ObjID) trace.Object
}

// Meta runs the meta-analysis over a trace one event at a time.
type Meta struct {
	opts  MetaOptions
	props proposals
	hb    *HB
	locks *Locks

	gs       []metaG
	vars     map[trace.ObjID]*metaVar
	lastObj  trace.ObjID
	lastVar  *metaVar
	reported map[tripleKey]int // index into findings
	findings []Finding
	free     []*txVar
	// collectAt is the number of interned lock states at which the next
	// collection runs, and collectMin the least it is set to (see
	// collect).
	collectAt, collectMin int
}

// metaG is one goroutine's state.
type metaG struct {
	id        trace.GoID
	tx        txTracker
	inTx      bool // in a transaction: intervals and txVars are live
	intervals []interval
	txVars    []*txVar
	// checkB lists the txVars that a release inside the transaction
	// must check again (caseB): those whose variable another goroutine
	// has accessed, less those that every group of it already serves
	// (fullAt). A transaction that spans a long loop holds thousands of
	// variables, most of them its own or served already; each release
	// checks only the others.
	checkB []*txVar
}

// interval is a maximal run of events of a transaction with one lock state
// and one clock: the granularity at which witnesses e differ.
type interval struct {
	state HistoryID
	vc    VC     // the goroutine's clock during the interval
	succ  uint32 // epoch of the event after the interval's last, 0 while it is the current one
}

// window is the first access of a transaction to a variable at one site
// with one kind: a candidate e1. Later occurrences of the same site open no
// new window because the first one's window contains theirs.
type window struct {
	site  trace.SiteID
	op    trace.Kind
	start int // interval of e1
	seq   uint64
	sums  []windowSum
}

// windowSum remembers which summary a window feeds for one e2 site and
// kind, and how many of its intervals (all closed) are already in it, so
// that each interval is summarised once per e2 site.
type windowSum struct {
	site trace.SiteID
	op   trace.Kind
	sum  int32
	done int
	// The interval last added and its succ then: repeated e2 in one
	// interval add nothing new.
	addedJ    int
	addedSucc uint32
}

// pendingF records that an access f of group grp matched some witness e
// of interval j or earlier of a transaction: a violation waiting for its
// e2.
type pendingF struct {
	grp int32
	j   int32
	seq uint64
}

// txVar is one variable's state in one goroutine's open transaction.
type txVar struct {
	v       *metaVar
	g       int
	windows []window
	pending []pendingF
	pos     []int32 // per group of v: 1 + its index in pending, 0 if none
	pj      []int32 // per group of v: 1 + its pending interval, 0 if none
	// fullAt and fullGroups say that when the last window started at
	// fullAt and v had fullGroups groups, every group of another
	// goroutine was pending there or had only accesses that happen
	// before the transaction's witnesses: caseB has nothing to add.
	fullAt     int32
	fullGroups int
	openIdx    int  // position in v.open
	inCheckB   bool // in its goroutine's checkB
}

// wantB puts tv in its goroutine's checkB, unless it is there or no other
// goroutine has accessed its variable.
func (m *Meta) wantB(tv *txVar) {
	if tv.inCheckB || tv.v.only == tv.g {
		return
	}
	tv.inCheckB = true
	g := &m.gs[tv.g]
	g.checkB = append(g.checkB, tv)
}

// servedB reports whether caseB has nothing to add to tv at any later
// interval: every group is pending or happens before, as of the last
// window, which no later interval changes.
func (tv *txVar) servedB(j int) bool {
	if len(tv.windows) == 0 {
		return false
	}
	last := tv.windows[len(tv.windows)-1].start
	return last <= j && tv.fullAt == int32(last) && tv.fullGroups == len(tv.v.groups)
}

// fgroup summarises the accesses f of one goroutine to one variable at one
// site with one kind: a finding's interleaved access. Its lock states are
// kept apart, each with its latest access (the largest epoch, the best
// candidate against happens-before).
type fgroup struct {
	g      int
	site   trace.SiteID
	op     trace.Kind
	latest uint32 // epoch of the group's latest access
	states []fstate
	cand   []int32    // summaries of other goroutines it may still form a new triple with
	head   int32      // most recently used state; states follow in decreasing epoch
	used   bool       // head is valid
	free   []int32    // slots of forgotten states
	idx    stateIndex // lock state -> slot in states
}

// groupKey packs a goroutine's dense index (below 2^24), a site and a kind
// into the key of metaVar.gidx.
func groupKey(g int, site trace.SiteID, op trace.Kind) uint64 {
	return uint64(g)<<40 | uint64(site)<<8 | uint64(op)
}

// slot returns a free slot of states for a new lock state.
func (f *fgroup) slot(state HistoryID) int32 {
	if n := len(f.free); n > 0 {
		k := f.free[n-1]
		f.free = f.free[:n-1]
		f.states[k] = fstate{state: state, prev: -1, next: -1}
		return k
	}
	f.states = append(f.states, fstate{state: state, prev: -1, next: -1})
	return int32(len(f.states) - 1)
}

// use records an access in state k with the given epoch, moving the state
// to the front of the list. Epochs of one goroutine only grow, so the list
// is in decreasing epoch order and a scan for "epoch > seen" stops early.
func (f *fgroup) use(k int32, epoch uint32, seq uint64) {
	st := &f.states[k]
	st.epoch, st.seq = epoch, seq
	f.latest = epoch
	if f.used && f.head == k {
		return
	}
	if st.prev >= 0 {
		f.states[st.prev].next = st.next
	}
	if st.next >= 0 {
		f.states[st.next].prev = st.prev
	}
	st.prev, st.next = -1, -1
	if f.used {
		st.next = f.head
		f.states[f.head].prev = k
	}
	f.head, f.used = k, true
}

// pruneSpan is how many kept states prune compares each state with: the
// most recent ones. Forgetting fewer states than could be forgotten
// changes no answer, only memory; comparing each state with all the
// others would cost the square of a group's states, and a group whose
// accesses run inside a lock held across a long loop has thousands of
// them that no other covers: each access adds the locks taken since to
// the outer lock's acquisition history, and a state with a shorter
// history is older but compatible with more.
const pruneSpan = 16

// prune forgets the lock states that a more recently used state covers
// (Locks.Covers). The most recent state is met first by caseB's scan, and
// it is compatible whenever a state it covers is, so the scan's answer does
// not change.
func (f *fgroup) prune(covers func(a, b HistoryID) bool) {
	if !f.used {
		return
	}
	var kept []int32
	dropped := false
	for k := f.head; k >= 0; {
		st := &f.states[k]
		next := st.next
		if slices.ContainsFunc(kept[:min(len(kept), pruneSpan)], func(a int32) bool { return covers(f.states[a].state, st.state) }) {
			f.states[st.prev].next = next
			if next >= 0 {
				f.states[next].prev = st.prev
			}
			*st = fstate{prev: -1, next: -1}
			f.free = append(f.free, k)
			dropped = true
		} else {
			kept = append(kept, k)
		}
		k = next
	}
	if dropped {
		f.idx.reset(len(kept))
		for _, k := range kept {
			f.idx.insert(f.states[k].state, k)
		}
	}
}

type fstate struct {
	state      HistoryID
	epoch      uint32
	seq        uint64
	prev, next int32 // the group's list of states, most recently used first; -1 ends it
}

// fref locates one lock state of one group.
type fref struct{ grp, st int32 }

// summary is the Phase I record of closed windows: for one goroutine, one
// e1 site and one e2 site, the lock states of the witnesses between them,
// each with the largest epoch of a witness's successor.
type summary struct {
	g          int
	s1, s2     trace.SiteID
	op1, op2   trace.Kind
	seq1, seq2 uint64
	states     []stateSucc
	idx        stateIndex // positions in states
	zero       int32      // position of the empty lock state, -1 if absent
	kept       int        // len(states) after the last compaction
	maxSucc    uint32     // the largest succ of states
	last       int32      // index of the state last added, a cache for idx
	done       []uint64   // bit set of the f groups whose triple with this summary is reported
}

type stateSucc struct {
	state HistoryID
	succ  uint32
}

type sumKey struct {
	g        int
	s1, s2   trace.SiteID
	op1, op2 trace.Kind
}

type metaVar struct {
	obj    trace.ObjID
	groups []fgroup
	gor    []int32          // per group: its goroutine (a dense column for caseB)
	lat    []uint32         // per group: its latest epoch
	only   int              // the one goroutine that has accessed the variable, -1 if several
	gidx   map[uint64]int32 // groupKey -> index in groups
	gcache [16]struct {     // a direct-mapped cache in front of gidx
		key uint64 // a groupKey; never 0, since no access kind is 0
		gix int32
	}
	sums   []summary
	sumIdx map[sumKey]int32
	open   []*txVar // windows of open transactions on this variable
}

type tripleKey struct {
	s1, sf, s2    trace.SiteID
	op1, opf, op2 trace.Kind
}

// NewMeta returns a Meta ready for the trace's first event.
func NewMeta(opts MetaOptions) *Meta {
	return &Meta{
		opts:       opts,
		hb:         NewHB(HBOptions{Object: opts.Object}),
		locks:      NewLocks(),
		vars:       make(map[trace.ObjID]*metaVar),
		reported:   make(map[tripleKey]int),
		collectAt:  minCollect,
		collectMin: minCollect,
	}
}

// minCollect is the number of interned lock states below which Meta does
// not collect them: a few megabytes.
const minCollect = 1 << 13

// collect forgets the lock states that neither a goroutine nor any record
// of the analysis holds (Locks.Collect). The records are the intervals of
// open transactions, the lock states of the f groups and those of the
// summaries; the f groups and summaries first drop the states that another
// of theirs covers (prune), as they drop those the empty lock state makes
// useless along the way, so what stays is bounded by what the program's
// sites do, not by the length of the run. The next collection runs when
// the table has doubled, so the cost is amortised over the new states.
func (m *Meta) collect() {
	covers := m.locks.Covers
	for _, v := range m.vars {
		for gi := range v.groups {
			v.groups[gi].prune(covers)
		}
		for si := range v.sums {
			v.sums[si].prune(covers)
		}
	}
	m.locks.Collect(func(live func(HistoryID)) {
		for gi := range m.gs {
			for _, in := range m.gs[gi].intervals {
				live(in.state)
			}
		}
		for _, v := range m.vars {
			for gi := range v.groups {
				for _, st := range v.groups[gi].states {
					live(st.state)
				}
			}
			for si := range v.sums {
				for _, st := range v.sums[si].states {
					live(st.state)
				}
			}
		}
	})
	m.collectAt = max(m.collectMin, 2*m.locks.States())
}

// MetaAnalysis runs the meta-analysis over a whole stream and returns its
// findings; see Meta.Findings.
func MetaAnalysis(r trace.Reader) ([]Finding, error) {
	m := NewMeta(MetaOptions{Object: r.Object})
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return m.Findings(), nil
		}
		if err != nil {
			return nil, err
		}
		m.Step(&e)
	}
}

// MetaAnalysisTrace runs the meta-analysis over a trace in memory.
func MetaAnalysisTrace(t *trace.Trace) []Finding {
	m := NewMeta(MetaOptions{Object: t.Object})
	for i := range t.Events {
		m.Step(&t.Events[i])
	}
	return m.Findings()
}

func (m *Meta) variable(x trace.ObjID) *metaVar {
	if m.lastVar != nil && m.lastObj == x {
		return m.lastVar
	}
	v := m.vars[x]
	if v == nil {
		v = &metaVar{obj: x, only: -1, gidx: make(map[uint64]int32), sumIdx: make(map[sumKey]int32)}
		m.vars[x] = v
	}
	m.lastObj, m.lastVar = x, v
	return v
}

// Step applies one event.
func (m *Meta) Step(e *trace.Event) {
	vc := m.hb.Step(e)
	ep := m.hb.Epoch()
	m.locks.Step(e)
	if (e.Kind == trace.KindAcquire || e.Kind == trace.KindRAcquire) && m.locks.States() >= m.collectAt {
		m.collect()
	}
	gi := ep.G
	for len(m.gs) <= gi {
		m.gs = append(m.gs, metaG{})
	}
	if s := m.hb.Advanced(); s >= 0 && s < len(m.gs) && m.gs[s].inTx {
		// A receive completed another goroutine's send: that goroutine's
		// events from now on have a new clock (a later clock only makes
		// matches harder, so there is nothing for caseB to find).
		o := &m.gs[s]
		o.intervals[len(o.intervals)-1].succ = m.hb.Clock(s)[s]
		o.push(o.intervals[len(o.intervals)-1].state, m.hb.Clock(s))
	}
	g := &m.gs[gi]
	g.id = e.G
	ended, begun, _, last := m.props.stepTx(&g.tx, e)
	if ended {
		m.closeTx(g)
	}
	if begun {
		g.inTx = true
		g.intervals = g.intervals[:0]
		g.push(m.locks.History(e.G), m.hb.Clock(gi))
	}
	m.apply(e, g, gi, vc, ep)
	if last || e.Kind == trace.KindEnd {
		g.tx = txTracker{}
		m.closeTx(g)
	}
}

// apply handles e in its roles: as an access, and as a lock or
// synchronisation operation that starts a new interval of its goroutine's
// transaction.
func (m *Meta) apply(e *trace.Event, g *metaG, gi int, vc VC, ep Epoch) {
	switch e.Kind {
	case trace.KindRead, trace.KindWrite:
		m.access(e, gi, vc, ep)
		return
	case trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW:
		// An atomic access is also a synchronisation operation: it ends
		// the interval, below.
		m.access(e, gi, vc, ep)
	case trace.KindRegionBegin, trace.KindRegionEnd, trace.KindEnd:
		return
	}
	if !g.inTx {
		return
	}
	// A lock or synchronisation operation inside a transaction: witnesses
	// from here on have a new lock state or clock.
	cur := &g.intervals[len(g.intervals)-1]
	cur.succ = ep.C
	g.push(m.locks.History(e.G), m.hb.Clock(gi))
	switch e.Kind {
	case trace.KindRelease, trace.KindRRelease:
	case trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW:
		// A window opened by this atomic access starts here and has not
		// been checked yet.
	default:
		// An acquire only adds to the lockset and the acquisition
		// histories, and any other operation only advances the clock:
		// both make every f harder to match, so an f that matches a
		// witness of the new interval matched one of the previous
		// interval already (caseB then, or caseA when it arrived).
		return
	}
	j := len(g.intervals) - 1
	for i := 0; i < len(g.checkB); {
		tv := g.checkB[i]
		m.caseB(tv, j)
		if tv.servedB(j) {
			tv.inCheckB = false
			last := len(g.checkB) - 1
			g.checkB[i] = g.checkB[last]
			g.checkB[last] = nil
			g.checkB = g.checkB[:last]
			continue
		}
		i++
	}
}

// push starts a new interval, reusing the clock storage of an interval of
// an earlier transaction so that steady state does not allocate.
func (g *metaG) push(state HistoryID, vc VC) {
	n := len(g.intervals)
	if n < cap(g.intervals) {
		g.intervals = g.intervals[:n+1]
		in := &g.intervals[n]
		in.state, in.succ = state, 0
		in.vc = append(in.vc[:0], vc...)
		return
	}
	g.intervals = append(g.intervals, interval{state: state, vc: vc.Clone()})
}

// access handles an access in its two roles: as f for other goroutines'
// transactions, and as e1 or e2 in its own goroutine's transaction.
func (m *Meta) access(e *trace.Event, gi int, vc VC, ep Epoch) {
	v := m.variable(e.Obj)
	state := m.locks.History(e.G)

	// Role f: update its class and check it against the witnesses that
	// precede it in the trace.
	gk := groupKey(gi, e.Site, e.Kind)
	slot := &v.gcache[(gk^gk>>40^gk>>13)&uint64(len(v.gcache)-1)]
	gix, ok := slot.gix, slot.key == gk
	if !ok {
		gix, ok = v.gidx[gk]
		if ok {
			slot.key, slot.gix = gk, gix
		}
	}
	if !ok {
		gix = int32(len(v.groups))
		v.gidx[gk] = gix
		switch {
		case gix == 0:
			v.only = gi
		case v.only != gi:
			v.only = -1
		}
		// A new group may match the other goroutines' open transactions
		// on v.
		for _, tv := range v.open {
			if tv.g != gi {
				m.wantB(tv)
			}
		}
		v.groups = append(v.groups, fgroup{g: gi, site: e.Site, op: e.Kind})
		v.gor = append(v.gor, int32(gi))
		v.lat = append(v.lat, 0)
		for si := range v.sums {
			if s := &v.sums[si]; s.g != gi && dependent(s.op1, e.Kind) && dependent(e.Kind, s.op2) {
				v.groups[gix].cand = append(v.groups[gix].cand, int32(si))
			}
		}
	}
	grp := &v.groups[gix]
	st, ok := grp.idx.find(state)
	if !ok {
		st = grp.slot(state)
		grp.idx.insert(state, st)
	}
	ref := fref{gix, st}
	grp.use(ref.st, ep.C, e.Seq)
	if state == 0 {
		// No lock held: this state is compatible with every other and
		// has the largest epoch, so the states used before it can never
		// be a better candidate again. Forget them.
		if grp.states[ref.st].next >= 0 {
			for k := grp.states[ref.st].next; k >= 0; {
				st := &grp.states[k]
				next := st.next
				*st = fstate{prev: -1, next: -1}
				grp.free = append(grp.free, k)
				k = next
			}
			grp.states[ref.st].next = -1
			grp.idx.reset(1)
			grp.idx.insert(0, ref.st)
		}
	}
	v.lat[ref.grp] = ep.C
	for _, tv := range v.open {
		if tv.g != gi {
			m.caseA(tv, ref.grp, state, e.Seq, vc)
		}
	}
	// Closed windows: only the summaries this group can still form a new
	// triple with.
	for c := 0; c < len(v.groups[ref.grp].cand); c++ {
		si := v.groups[ref.grp].cand[c]
		s := &v.sums[si]
		seen := vc.Get(s.g)
		if s.maxSucc <= seen {
			continue
		}
		k := tripleKey{s.s1, e.Site, s.s2, s.op1, e.Kind, s.op2}
		if _, ok := m.reported[k]; ok {
			m.markDone(v, si, ref.grp)
			c--
			continue
		}
		for _, st := range s.states {
			if st.succ > seen && m.locks.Compatible(st.state, state) {
				m.report(k, v, s.g, s.seq1, gi, e.Seq, s.seq2)
				m.markDone(v, si, ref.grp)
				c--
				break
			}
		}
	}

	g := &m.gs[gi]
	if !g.inTx || e.Flags&trace.Outside != 0 {
		// Not in a transaction, or an atomic operation's own access,
		// which its event stands for there (trace.Outside).
		return
	}
	tv := m.txVarOf(g, gi, v)

	// Role e2: resolve the pending matches of every window, and record the
	// closed windows for the f that come later. Two atomic
	// read-modify-writes are not e1 and e2: each reads the variable's
	// value itself, at once, and acts on what it read, so a region that
	// claims work with two adds (i := n.Add(1); ...; i = n.Add(1)) is
	// not the worse for another goroutine's operation in between. A
	// load then an add stays a pair: the add may act on a check the
	// load made (if n.Load() < max { n.Add(1) }).
	cur := len(g.intervals) - 1
	for wi := range tv.windows {
		w := &tv.windows[wi]
		if e.Kind == trace.KindAtomicRMW && w.op == trace.KindAtomicRMW {
			continue
		}
		ws := m.windowSum(v, gi, w, e)
		s := &v.sums[ws.sum]
		for _, p := range tv.pending {
			if int(p.j) < w.start || s.isDone(p.grp) {
				continue
			}
			f := &v.groups[p.grp]
			if !dependent(w.op, f.op) || !dependent(f.op, e.Kind) {
				continue
			}
			k := tripleKey{w.site, f.site, e.Site, w.op, f.op, e.Kind}
			if _, ok := m.reported[k]; !ok {
				m.report(k, v, gi, w.seq, f.g, p.seq, e.Seq)
			}
			m.markDone(v, ws.sum, p.grp)
		}
		m.summarise(v, ws, w, e, g.intervals, ep.C)
	}

	// Role e1: open a window for a new site, and check it against the f
	// that precede it.
	for wi := range tv.windows {
		if tv.windows[wi].site == e.Site && tv.windows[wi].op == e.Kind {
			return
		}
	}
	if e.Kind != trace.KindRead && e.Kind != trace.KindWrite {
		// An atomic access starts a new interval (its clock includes
		// what it acquired); Step checks that interval once it exists.
		tv.openWindow(window{site: e.Site, op: e.Kind, start: cur + 1, seq: e.Seq})
		m.wantB(tv)
		return
	}
	tv.openWindow(window{site: e.Site, op: e.Kind, start: cur, seq: e.Seq})
	m.caseB(tv, cur)
	m.wantB(tv)
}

// openWindow appends w, reusing the storage of a window of an earlier
// transaction.
func (tv *txVar) openWindow(w window) {
	n := len(tv.windows)
	if n < cap(tv.windows) {
		w.sums = tv.windows[:n+1][n].sums[:0]
	}
	tv.windows = append(tv.windows, w)
}

// dependent reports whether two accesses to one variable conflict: at
// least one of them writes (the relation D of seed 004, section 2).
func dependent(a, b trace.Kind) bool { return a.IsWrite() || b.IsWrite() }

// txVarOf returns the state of variable v in goroutine g's open
// transaction, creating it on the first access.
func (m *Meta) txVarOf(g *metaG, gi int, v *metaVar) *txVar {
	// Of the two lists that hold it, the shorter: a long transaction
	// holds many variables, a variable is in the transactions of a few
	// goroutines at a time.
	if len(g.txVars) <= len(v.open) {
		for _, tv := range g.txVars {
			if tv.v == v {
				return tv
			}
		}
	} else {
		for _, tv := range v.open {
			if tv.g == gi {
				return tv
			}
		}
	}
	var tv *txVar
	if n := len(m.free); n > 0 {
		tv = m.free[n-1]
		m.free = m.free[:n-1]
		for _, p := range tv.pending {
			tv.pos[p.grp] = 0
			tv.pj[p.grp] = 0
		}
		tv.windows, tv.pending = tv.windows[:0], tv.pending[:0]
	} else {
		tv = &txVar{}
	}
	tv.v, tv.g = v, gi
	tv.fullAt, tv.fullGroups = -1, 0
	tv.openIdx = len(v.open)
	tv.inCheckB = false
	v.open = append(v.open, tv)
	g.txVars = append(g.txVars, tv)
	return tv
}

func (m *Meta) closeTx(g *metaG) {
	for _, tv := range g.txVars {
		v := tv.v
		last := len(v.open) - 1
		v.open[tv.openIdx] = v.open[last]
		v.open[tv.openIdx].openIdx = tv.openIdx
		v.open[last] = nil
		v.open = v.open[:last]
		tv.v = nil
		m.free = append(m.free, tv)
	}
	g.txVars = g.txVars[:0]
	for _, tv := range g.checkB {
		tv.inCheckB = false
	}
	clear(g.checkB)
	g.checkB = g.checkB[:0]
	g.intervals = g.intervals[:0]
	g.inTx = false
}

// caseA checks the access f (group grp, lock state, clock vc) against the
// witnesses of tv's open transaction, all of which precede f in the trace,
// so f cannot happen before them. A witness of interval j qualifies if its lock state
// is compatible with f's and the event after it does not happen before f;
// the latest qualifying interval serves every window that starts no later.
func (m *Meta) caseA(tv *txVar, grp int32, state HistoryID, seq uint64, vc VC) {
	if len(tv.windows) == 0 {
		return
	}
	m.scanA(tv, grp, state, seq, vc)
	if tv.pendingAt(grp) < int32(tv.windows[len(tv.windows)-1].start) {
		// The group has a new access that caseB has not seen.
		tv.fullAt = -1
		m.wantB(tv)
	}
}

func (m *Meta) scanA(tv *txVar, grp int32, state HistoryID, seq uint64, vc VC) {
	g := &m.gs[tv.g]
	seen := vc.Get(tv.g)
	// Only a match after the group's pending interval serves a window
	// that does not have it yet.
	first := max(tv.windows[0].start, int(tv.pendingAt(grp))+1)
	if first > tv.windows[len(tv.windows)-1].start {
		return
	}
	for j := len(g.intervals) - 1; j >= first; j-- {
		in := &g.intervals[j]
		if in.succ != 0 && in.succ <= seen {
			// This interval's successor happens before f, and so do the
			// successors of all earlier intervals.
			return
		}
		if m.locks.Compatible(in.state, state) {
			m.addPending(tv, grp, j, seq)
			return
		}
	}
}

// caseB checks interval j of tv's transaction against the accesses f that
// precede it in the trace: the event after a witness then cannot happen
// before f, and f qualifies if it does not happen before the witness (the
// latest f of a class is the best candidate) and their lock states are
// compatible.
func (m *Meta) caseB(tv *txVar, j int) {
	if len(tv.windows) == 0 || tv.v.only == tv.g {
		return // no other goroutine has accessed the variable
	}
	in := &m.gs[tv.g].intervals[j]
	// A match at j only serves windows starting after the group's
	// current pending interval; windows start in increasing order.
	last := int32(min(tv.windows[len(tv.windows)-1].start, j))
	if tv.fullAt == last && tv.fullGroups == len(tv.v.groups) {
		return // every group already serves every window
	}
	full := true
	defer func() {
		if full {
			tv.fullAt, tv.fullGroups = last, len(tv.v.groups)
		}
	}()
	v := tv.v
	for len(tv.pj) < len(v.groups) {
		tv.pj = append(tv.pj, 0)
	}
	// The loop reads only the dense per-group columns until a group may
	// match.
	pj, gor, lat := tv.pj[:len(v.groups)], v.gor, v.lat
	for gi := range pj {
		if gor[gi] == int32(tv.g) || pj[gi] > last {
			continue // pj is the pending interval plus one
		}
		seen := in.vc.Get(int(gor[gi]))
		matched := false
		if lat[gi] > seen {
			// Most recent first, and only while they do not happen
			// before the witness.
			f := &v.groups[gi]
			for k := f.head; k >= 0 && f.states[k].epoch > seen; k = f.states[k].next {
				if st := &f.states[k]; m.locks.Compatible(in.state, st.state) {
					m.addPending(tv, int32(gi), j, st.seq)
					matched = true
					break
				}
			}
		}
		if !matched && lat[gi] > seen {
			// Incompatible for now: another lock state may match. (A
			// group whose accesses all happen before the witness stays
			// so until it has a new access, which clears fullAt in
			// caseA.)
			full = false
		}
	}
}

// pendingAt returns the interval at which group grp is pending in tv, or
// -1.
func (tv *txVar) pendingAt(grp int32) int32 {
	if int(grp) < len(tv.pos) {
		if k := tv.pos[grp]; k > 0 {
			return tv.pending[k-1].j
		}
	}
	return -1
}

func (m *Meta) addPending(tv *txVar, grp int32, j int, seq uint64) {
	if int(grp) < len(tv.pos) {
		if k := tv.pos[grp]; k > 0 {
			if p := &tv.pending[k-1]; int32(j) > p.j {
				p.j, p.seq = int32(j), seq
				tv.pj[grp] = int32(j) + 1
			}
			return
		}
	}
	for len(tv.pos) <= int(grp) {
		tv.pos = append(tv.pos, 0)
	}
	for len(tv.pj) <= int(grp) {
		tv.pj = append(tv.pj, 0)
	}
	tv.pj[grp] = int32(j) + 1
	tv.pending = append(tv.pending, pendingF{grp: grp, j: int32(j), seq: seq})
	tv.pos[grp] = int32(len(tv.pending))
}

// summarise records, for the closed window (w, e2), the lock states of its
// witnesses with the epoch of each one's successor: Phase I's WW and AA
// sets (seed 004, section 4) with happens-before information. The last of
// the transaction's intervals ins is followed by e2 itself; the earlier
// ones are closed and were summarised by an earlier e2 with the same site
// if there was one.
func (m *Meta) summarise(v *metaVar, ws *windowSum, w *window, e2 *trace.Event, ins []interval, e2Epoch uint32) {
	s := &v.sums[ws.sum]
	s.seq1, s.seq2 = w.seq, e2.Seq
	cur := len(ins) - 1
	for j := ws.done; j <= cur; j++ {
		succ := ins[j].succ
		if j == cur {
			succ = e2Epoch
		}
		if j == ws.addedJ && succ <= ws.addedSucc {
			continue
		}
		s.add(ins[j].state, succ)
		ws.addedJ, ws.addedSucc = j, succ
	}
	ws.done = cur
}

// markDone records that the triple of summary si and group grp is
// reported, so neither is matched against the other again.
func (m *Meta) markDone(v *metaVar, si, grp int32) {
	s := &v.sums[si]
	if s.isDone(grp) {
		return
	}
	for len(s.done) <= int(grp)/64 {
		s.done = append(s.done, 0)
	}
	s.done[grp/64] |= 1 << (grp % 64)
	f := &v.groups[grp]
	if k := slices.Index(f.cand, si); k >= 0 {
		f.cand[k] = f.cand[len(f.cand)-1]
		f.cand = f.cand[:len(f.cand)-1]
	}
}

// windowSum returns the record of window w for the e2 site of e2, creating
// it and its summary on first use.
func (m *Meta) windowSum(v *metaVar, gi int, w *window, e2 *trace.Event) *windowSum {
	for k := range w.sums {
		if w.sums[k].site == e2.Site && w.sums[k].op == e2.Kind {
			return &w.sums[k]
		}
	}
	key := sumKey{gi, w.site, e2.Site, w.op, e2.Kind}
	si, ok := v.sumIdx[key]
	if !ok {
		si = int32(len(v.sums))
		v.sumIdx[key] = si
		v.sums = append(v.sums, summary{g: gi, s1: w.site, s2: e2.Site, op1: w.op, op2: e2.Kind, zero: -1})
		for grp := range v.groups {
			if f := &v.groups[grp]; f.g != gi && dependent(w.op, f.op) && dependent(f.op, e2.Kind) {
				f.cand = append(f.cand, si)
			}
		}
	}
	w.sums = append(w.sums, windowSum{site: e2.Site, op: e2.Kind, sum: si, done: w.start, addedJ: -1})
	return &w.sums[len(w.sums)-1]
}

// isDone reports whether group grp's triple with s is reported.
func (s *summary) isDone(grp int32) bool {
	return int(grp)/64 < len(s.done) && s.done[grp/64]&(1<<(grp%64)) != 0
}

// add merges a witness lock state with the epoch of its successor.
func (s *summary) add(state HistoryID, succ uint32) {
	s.maxSucc = max(s.maxSucc, succ)
	// The empty lock state is compatible with every state, so a state
	// whose succ is no larger than the empty state's is never needed.
	if s.zero >= 0 && state != 0 && s.states[s.zero].succ >= succ {
		return
	}
	if len(s.states) > 2*s.kept+16 {
		s.compact()
	}
	if int(s.last) < len(s.states) && s.states[s.last].state == state {
		st := &s.states[s.last]
		st.succ = max(st.succ, succ)
		return
	}
	k, ok := s.idx.find(state)
	if ok {
		s.last = k
		st := &s.states[k]
		st.succ = max(st.succ, succ)
		return
	}
	s.last = int32(len(s.states))
	s.states = append(s.states, stateSucc{state, succ})
	s.idx.insert(state, s.last)
	if state == 0 {
		s.zero = s.last
	}
}

// compact drops the states that the empty lock state dominates and
// rebuilds the index.
func (s *summary) compact() {
	if s.zero >= 0 {
		z := s.states[s.zero].succ
		kept := s.states[:0]
		for _, st := range s.states {
			if st.state == 0 || st.succ > z {
				kept = append(kept, st)
			}
		}
		clear(s.states[len(kept):])
		s.states = kept
	}
	s.reindex()
}

// prune drops the states that an earlier state with a successor at least
// as late covers (Locks.Covers): a match against the dropped state is a
// match against the earlier one, and a match reports the summary's sites
// whichever state it is.
func (s *summary) prune(covers func(a, b HistoryID) bool) {
	kept := s.states[:0]
	for _, st := range s.states {
		if !slices.ContainsFunc(kept[max(0, len(kept)-pruneSpan):], func(a stateSucc) bool { return a.succ >= st.succ && covers(a.state, st.state) }) {
			kept = append(kept, st)
		}
	}
	if len(kept) == len(s.states) {
		return
	}
	clear(s.states[len(kept):])
	s.states = kept
	s.reindex()
}

// reindex rebuilds the index of s.states.
func (s *summary) reindex() {
	s.idx.reset(len(s.states))
	s.zero, s.last = -1, 0
	for k, st := range s.states {
		s.idx.insert(st.state, int32(k))
		if st.state == 0 {
			s.zero = int32(k)
		}
	}
	s.kept = len(s.states)
}

// stateIndex maps lock states to positions in a slice: open addressing
// over int32 keys, several times cheaper than a map on this path (every
// witness interval of every window passes here).
type stateIndex struct {
	keys []int32 // HistoryID+1, 0 for an empty slot
	vals []int32
	n    int
}

// reset empties x, keeping its tables if they are large enough for n
// states.
func (x *stateIndex) reset(n int) {
	if 2*(n+1) > len(x.keys) {
		*x = stateIndex{}
		return
	}
	clear(x.keys)
	x.n = 0
}

func (x *stateIndex) find(h HistoryID) (int32, bool) {
	if len(x.keys) == 0 {
		return 0, false
	}
	mask := len(x.keys) - 1
	for i := hashState(h) & mask; ; i = (i + 1) & mask {
		switch x.keys[i] {
		case int32(h) + 1:
			return x.vals[i], true
		case 0:
			return 0, false
		}
	}
}

// insert maps h, which must not be present, to v.
func (x *stateIndex) insert(h HistoryID, v int32) {
	if 2*(x.n+1) > len(x.keys) {
		oldK, oldV := x.keys, x.vals
		size := max(16, 2*len(x.keys))
		x.keys, x.vals, x.n = make([]int32, size), make([]int32, size), 0
		for i, k := range oldK {
			if k != 0 {
				x.put(HistoryID(k-1), oldV[i])
			}
		}
	}
	x.put(h, v)
}

func (x *stateIndex) put(h HistoryID, v int32) {
	mask := len(x.keys) - 1
	i := hashState(h) & mask
	for x.keys[i] != 0 {
		i = (i + 1) & mask
	}
	x.keys[i], x.vals[i] = int32(h)+1, v
	x.n++
}

func hashState(h HistoryID) int { return int(uint32(h) * 2654435761 >> 7) }

func (m *Meta) report(k tripleKey, v *metaVar, g1 int, seq1 uint64, gf int, seqf uint64, seq2 uint64) {
	var name string
	if m.opts.Object != nil {
		name = m.opts.Object(v.obj).Name
	}
	gid1, gidf := m.gs[g1].id, m.gs[gf].id
	m.reported[k] = len(m.findings)
	m.findings = append(m.findings, Finding{
		Kind:    KindAtomicity,
		Pattern: letter(k.op1) + "-" + letter(k.opf) + "-" + letter(k.op2),
		Level:   LevelPredicted,
		Var:     name,
		Accesses: []Access{
			{Seq: seq1, G: gid1, Op: k.op1, Obj: v.obj, Site: k.s1, Role: "first"},
			{Seq: seqf, G: gidf, Op: k.opf, Obj: v.obj, Site: k.sf, Role: "interleaved"},
			{Seq: seq2, G: gid1, Op: k.op2, Obj: v.obj, Site: k.s2, Role: "last"},
		},
		Count: 1,
	})
}

// letter returns "W" for a write and "R" for a read, atomic or not.
func letter(k trace.Kind) string {
	if k.IsWrite() {
		return "W"
	}
	return "R"
}

// Findings returns the violations found so far, one per site triple,
// ordered by the positions of their accesses. The accesses are the first
// instance found; Count is 1 (deduplication across findings is a later
// stage's work).
func (m *Meta) Findings() []Finding {
	out := slices.Clone(m.findings)
	slices.SortFunc(out, func(a, b Finding) int {
		for i := range a.Accesses {
			if c := cmp.Compare(a.Accesses[i].Seq, b.Accesses[i].Seq); c != 0 {
				return c
			}
		}
		return cmp.Compare(a.Pattern, b.Pattern)
	})
	return out
}

// Stats describes the size of the analysis state, for benchmarks and
// debugging: lock states, f classes and closed-window summaries.
func (m *Meta) Stats() (lockStates, fClasses, summaries int) {
	for _, v := range m.vars {
		for _, g := range v.groups {
			fClasses += len(g.states) - len(g.free)
		}
		summaries += len(v.sums)
	}
	return m.locks.States(), fClasses, summaries
}
