package predict

import (
	"errors"
	"maps"
	"slices"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file builds a witness for each finding: a schedule prefix that
// realises it, in the spirit of PECAN's schedule generation
// (shared/seeds/003_50220ead9b146295.txt, section 6, Algorithms 3 and 4).
//
// Algorithms 3 and 4 move the events that depend on a violation event, and
// the outermost lock node protecting it with the nodes that depend on that,
// to the other side of the interleaved event; Theorem 1 proves the result
// feasible for real violations under nested locking. Rather than one fixed
// move, the builder here searches: it starts from the trace's own prefix
// before the outermost lock acquisitions of the goroutines involved (the
// OML nodes of section 6.1), then explores schedules of the window that
// follows in trace order first, holding back a goroutine only where a
// target event is not due yet, and backtracking on lock conflicts. The
// first schedule found is what Algorithms 3 and 4 would produce in the
// common case (only the dependents of the moved event change places); the
// backtracking covers the cases where the moved events hold a lock other
// goroutines need, and on small traces the search is exhaustive, which the
// differential tests rely on.
//
// Every schedule is then checked by validateSchedule (schedcheck.go), which
// shares no code with the search, before a finding is reported.

// witnessGoal is what a witness must exhibit: the targets run in this
// order, and for a race the two run back to back.
type witnessGoal struct {
	targets  []uint32
	adjacent bool
}

// Witness search limits. The window around the violation is searched
// first, from the trace's own state at its start; a trace of up to
// wholeTraceLimit events is then also searched whole, and one of up to
// smallTraceLimit only whole (exhaustively, as the differential tests
// need). Every search expands at most searchBudget states, so that one
// finding cannot cost more than a few milliseconds.
const (
	smallTraceLimit = 256     // traces up to this many events are only searched whole
	wholeTraceLimit = 4096    // traces up to this many events are searched whole if the window fails
	windowMargin    = 64      // events before the first target kept movable
	maxWindow       = 1 << 17 // largest window searched, in events
	searchBudget    = 20000   // states expanded per goal
)

// errNoWitness says the search found no schedule within its limits.
var errNoWitness = errors.New("no schedule realises it")

// syncMeta is what both the builder and the validator look up about the
// synchronisation of a trace: where each message was sent and received,
// which Fork started a goroutine, and so on.
type syncMeta struct {
	t       *trace.Trace
	forkOf  map[trace.GoID]uint32 // child -> its Fork event
	sendIdx map[[2]uint64]uint32  // (channel, message) -> Send event
	recvIdx map[[2]uint64]uint32  // (channel, message) -> Recv event
	closeOf map[trace.ObjID]uint32
	onceRan map[trace.ObjID]uint32 // Once -> the Do that ran the function
	// stateEvs lists the events that change the state of a lock or a
	// WaitGroup (prefixState), in trace order, and stateAfter the state
	// of the event's object after it: for a lock, 1 + the dense number of
	// the goroutine holding it for writing (0 if none) in the low 32 bits
	// and its read holds in the high 32; for a WaitGroup, its counter.
	// objOps lists each object's events (indices into stateEvs, in
	// order), object after object, from objStart[oi] to objStart[oi+1],
	// so that an object's state before any event is one binary search
	// away: no replay of the prefix, which each worker deciding
	// candidates made through the whole trace.
	stateEvs   []uint32
	stateAfter []int64
	objStart   []uint32
	objOps     []uint32
	stateObjs  []trace.ObjID          // dense state object to ObjID
	lockObj    map[trace.ObjID]uint32 // a lock's ObjID to its dense state object
	wgObj      map[trace.ObjID]uint32 // a WaitGroup's ObjID to its dense state object
	stateGs    []trace.GoID           // dense goroutine to GoID
}

func newSyncMeta(t *trace.Trace) *syncMeta {
	m := &syncMeta{
		t:       t,
		forkOf:  make(map[trace.GoID]uint32),
		sendIdx: make(map[[2]uint64]uint32),
		recvIdx: make(map[[2]uint64]uint32),
		closeOf: make(map[trace.ObjID]uint32),
		onceRan: make(map[trace.ObjID]uint32),
		lockObj: make(map[trace.ObjID]uint32),
		wgObj:   make(map[trace.ObjID]uint32),
	}
	// Size the lists of state-changing events by counting them first:
	// growing them by append copied them several times over.
	n := 0
	for i := range t.Events {
		switch t.Events[i].Kind {
		case trace.KindAcquire, trace.KindRelease, trace.KindRAcquire, trace.KindRRelease, trace.KindWGAdd, trace.KindWGDone:
			n++
		}
	}
	m.stateEvs = make([]uint32, 0, n)
	m.stateAfter = make([]int64, 0, n)
	opObj := make([]uint32, 0, n) // per state event, its object
	var cur []int64               // per object, its state so far
	held := make(map[[2]uint32]int32)
	gIdx := make(map[trace.GoID]uint32)
	// The last object and goroutine looked up: lock operations come in
	// runs on one lock and goroutine.
	lastObj, lastWG, lastOi := trace.ObjID(0), false, ^uint32(0)
	lastG, lastGi := trace.GoID(0), ^uint32(0)
	for i := range t.Events {
		e := &t.Events[i]
		switch e.Kind {
		case trace.KindFork:
			m.forkOf[trace.GoID(e.Arg)] = uint32(i)
		case trace.KindSend:
			m.sendIdx[[2]uint64{uint64(e.Obj), e.Arg}] = uint32(i)
		case trace.KindRecv:
			if e.Arg != 0 {
				m.recvIdx[[2]uint64{uint64(e.Obj), e.Arg}] = uint32(i)
			}
		case trace.KindClose:
			m.closeOf[e.Obj] = uint32(i)
		case trace.KindOnceDo:
			if e.Arg == 1 {
				m.onceRan[e.Obj] = uint32(i)
			}
		case trace.KindAcquire, trace.KindRelease, trace.KindRAcquire, trace.KindRRelease, trace.KindWGAdd, trace.KindWGDone:
			wg := e.Kind == trace.KindWGAdd || e.Kind == trace.KindWGDone
			if e.Obj != lastObj || wg != lastWG || lastOi == ^uint32(0) {
				objs := m.lockObj
				if wg {
					objs = m.wgObj
				}
				oi, ok := objs[e.Obj]
				if !ok {
					oi = uint32(len(m.stateObjs))
					objs[e.Obj] = oi
					m.stateObjs = append(m.stateObjs, e.Obj)
					cur = append(cur, 0)
				}
				lastObj, lastWG, lastOi = e.Obj, wg, oi
			}
			if e.G != lastG || lastGi == ^uint32(0) {
				gi, ok := gIdx[e.G]
				if !ok {
					gi = uint32(len(m.stateGs))
					gIdx[e.G] = gi
					m.stateGs = append(m.stateGs, e.G)
				}
				lastG, lastGi = e.G, gi
			}
			c := &cur[lastOi]
			switch e.Kind {
			case trace.KindAcquire:
				*c = *c&^0xffffffff | int64(lastGi+1)
			case trace.KindRelease:
				*c &^= 0xffffffff
			case trace.KindRAcquire:
				held[[2]uint32{lastOi, lastGi}]++
				*c += 1 << 32
			case trace.KindRRelease:
				// An unmatched RUnlock leaves no negative count behind.
				if k := [2]uint32{lastOi, lastGi}; held[k] > 0 {
					held[k]--
					*c -= 1 << 32
				}
			case trace.KindWGAdd:
				*c += int64(e.Arg)
			case trace.KindWGDone:
				*c--
			}
			m.stateEvs = append(m.stateEvs, uint32(i))
			m.stateAfter = append(m.stateAfter, *c)
			opObj = append(opObj, lastOi)
		}
	}
	// Each object's events, object after object.
	m.objStart = make([]uint32, len(m.stateObjs)+1)
	for _, oi := range opObj {
		m.objStart[oi+1]++
	}
	for oi := range m.stateObjs {
		m.objStart[oi+1] += m.objStart[oi]
	}
	m.objOps = make([]uint32, len(opObj))
	fill := slices.Clone(m.objStart[:len(m.stateObjs)])
	for k, oi := range opObj {
		m.objOps[fill[oi]] = uint32(k)
		fill[oi]++
	}
	return m
}

// newPrefixState returns the state before the trace's first event.
func (m *syncMeta) newPrefixState() *prefixState {
	return &prefixState{m: m}
}

// chanCap returns a channel's capacity and whether it is known.
func (m *syncMeta) chanCap(obj trace.ObjID) (uint64, bool) {
	o := m.t.Object(obj)
	if o.Kind != trace.ObjChan || o.Cap < 0 {
		return 0, false
	}
	return uint64(o.Cap), true
}

// prefixState is the state of locks and WaitGroups after a prefix of the
// trace as recorded, the events before at. It reads each object's state
// from syncMeta's lists when asked, so moving it costs nothing, forwards
// or back.
type prefixState struct {
	at uint32
	m  *syncMeta
	// win is the memory of the last witness window built from this
	// state (newWindow), reused by the next: a trace with many
	// candidates builds one window per candidate, and allocating each
	// anew made the collector the largest cost of deciding them.
	win *schedWindow
}

// advance moves p to the state after the events before to.
func (p *prefixState) advance(to uint32) { p.at = to }

// state returns dense object oi's state after the events before p.at
// (syncMeta.stateAfter), 0 before its first.
func (p *prefixState) state(oi uint32) int64 {
	m := p.m
	ops := m.objOps[m.objStart[oi]:m.objStart[oi+1]]
	k := sortSearch(len(ops), func(j int) bool { return m.stateEvs[ops[j]] >= p.at })
	if k == 0 {
		return 0
	}
	return m.stateAfter[ops[k-1]]
}

// writerOf returns the goroutine holding lock obj for writing, if any.
func (p *prefixState) writerOf(obj trace.ObjID) (trace.GoID, bool) {
	if oi, ok := p.m.lockObj[obj]; ok {
		if w := uint32(p.state(oi)); w != 0 {
			return p.m.stateGs[w-1], true
		}
	}
	return 0, false
}

// readHolds returns how many read holds of lock obj are open.
func (p *prefixState) readHolds(obj trace.ObjID) int32 {
	if oi, ok := p.m.lockObj[obj]; ok {
		return int32(p.state(oi) >> 32)
	}
	return 0
}

// wgCounter returns WaitGroup obj's counter.
func (p *prefixState) wgCounter(obj trace.ObjID) int64 {
	if oi, ok := p.m.wgObj[obj]; ok {
		return p.state(oi)
	}
	return 0
}

// schedWindow is the part of a trace a witness search reorders, with the
// enabling conditions of its events.
type schedWindow struct {
	m          *syncMeta
	start, end uint32
	gs         []trace.GoID // window goroutines
	gIdx       map[trace.GoID]int
	evs        [][]uint32 // per window goroutine, its events in program order
	local      []int32    // per event in [start,end): its position in its goroutine's list
	lg         []int32    // per event in [start,end): its window goroutine
	preds      [][]uint32 // per event in [start,end): events in the window it waits for
	lockIdx    map[trace.ObjID]int
	wgIdx      map[trace.ObjID]int
	initWriter []int32 // per lock: window goroutine holding it at start, -1 none, -2 outside
	initRead   []int32 // per lock: readers at start
	initWG     []int64
	// Scratch for newWindow, kept between windows.
	lastSig, stores, loads map[trace.ObjID][]uint32
	// Scratch for the search's visited states, kept between searches.
	seen map[uint64]struct{}
}

func (w *schedWindow) rel(e uint32) int { return int(e - w.start) }

// newWindow describes events [start, end) given the state before start.
// The window lives in p's memory (prefixState.win) until the next call.
func newWindow(m *syncMeta, p *prefixState, start, end uint32) *schedWindow {
	t := m.t
	w := p.win
	if w == nil {
		w = &schedWindow{gIdx: make(map[trace.GoID]int), lockIdx: make(map[trace.ObjID]int), wgIdx: make(map[trace.ObjID]int),
			lastSig: make(map[trace.ObjID][]uint32), stores: make(map[trace.ObjID][]uint32), loads: make(map[trace.ObjID][]uint32)}
		p.win = w
	}
	w.m, w.start, w.end = m, start, end
	clear(w.gIdx)
	clear(w.lockIdx)
	clear(w.wgIdx)
	clear(w.lastSig)
	clear(w.stores)
	clear(w.loads)
	w.gs = w.gs[:0]
	n := int(end - start)
	w.local = resize(w.local, n)
	w.lg = resize(w.lg, n)
	if cap(w.preds) < n {
		w.preds = append(w.preds[:cap(w.preds)], make([][]uint32, n-cap(w.preds))...)
	}
	w.preds = w.preds[:n]
	for i := range w.preds {
		w.preds[i] = w.preds[i][:0]
	}
	lastSig := w.lastSig
	// Atomic operations on one address that conflict keep the order the
	// trace gives them, so that each reads what it read in the trace: a
	// load after every store recorded before it, a store after every load
	// and store recorded before it (reordering two stores would change
	// which one a later load reads).
	stores, loads := w.stores, w.loads
	// The goroutines' lists reuse the arrays of the last window's.
	w.evs = w.evs[:0]
	for i := start; i < end; i++ {
		e := &t.Events[i]
		gi, ok := w.gIdx[e.G]
		if !ok {
			gi = len(w.gs)
			w.gIdx[e.G] = gi
			w.gs = append(w.gs, e.G)
			if k := len(w.evs); k < cap(w.evs) {
				w.evs = w.evs[:k+1]
				w.evs[k] = w.evs[k][:0]
			} else {
				w.evs = append(w.evs, nil)
			}
			// A goroutine starts after its Fork.
			if f, ok := m.forkOf[e.G]; ok && f >= start && f < i {
				w.preds[w.rel(i)] = append(w.preds[w.rel(i)], f)
			}
		}
		r := w.rel(i)
		w.local[r] = int32(len(w.evs[gi]))
		w.lg[r] = int32(gi)
		if k := len(w.evs[gi]); k > 0 {
			// The event after a send completes only once the receive
			// cap messages earlier has happened (the Go memory model's
			// rule for channels; cap 0 is a rendezvous).
			prev := &t.Events[w.evs[gi][k-1]]
			if prev.Kind == trace.KindSend {
				if c, ok := m.chanCap(prev.Obj); ok && prev.Arg > c {
					if rv, ok := m.recvIdx[[2]uint64{uint64(prev.Obj), prev.Arg - c}]; ok && rv >= start && rv < end {
						w.preds[r] = append(w.preds[r], rv)
					}
				}
			}
		}
		w.evs[gi] = append(w.evs[gi], i)
		inWin := func(x uint32) bool { return x >= start && x < i }
		switch e.Kind {
		case trace.KindRecv:
			if e.Arg == 0 {
				if c, ok := m.closeOf[e.Obj]; ok && inWin(c) {
					w.preds[r] = append(w.preds[r], c)
				}
			} else if s, ok := m.sendIdx[[2]uint64{uint64(e.Obj), e.Arg}]; ok && inWin(s) {
				w.preds[r] = append(w.preds[r], s)
			}
		case trace.KindCondSignal, trace.KindCondBroadcast:
			lastSig[e.Obj] = append(lastSig[e.Obj], i)
		case trace.KindCondWait:
			w.preds[r] = append(w.preds[r], lastSig[e.Obj]...)
		case trace.KindOnceDo:
			if e.Arg == 0 {
				if o, ok := m.onceRan[e.Obj]; ok && inWin(o) {
					w.preds[r] = append(w.preds[r], o)
				}
			}
		case trace.KindAtomicStore:
			w.preds[r] = append(w.preds[r], loads[e.Obj]...)
			w.preds[r] = append(w.preds[r], stores[e.Obj]...)
			stores[e.Obj] = append(stores[e.Obj], i)
		case trace.KindAtomicLoad:
			w.preds[r] = append(w.preds[r], stores[e.Obj]...)
			loads[e.Obj] = append(loads[e.Obj], i)
		case trace.KindAtomicRMW:
			w.preds[r] = append(w.preds[r], stores[e.Obj]...)
			w.preds[r] = append(w.preds[r], loads[e.Obj]...)
			stores[e.Obj] = append(stores[e.Obj], i)
			loads[e.Obj] = append(loads[e.Obj], i)
		case trace.KindAcquire, trace.KindRAcquire, trace.KindRelease, trace.KindRRelease:
			if _, ok := w.lockIdx[e.Obj]; !ok {
				w.lockIdx[e.Obj] = len(w.lockIdx)
			}
		case trace.KindWGAdd, trace.KindWGDone, trace.KindWGWait:
			if _, ok := w.wgIdx[e.Obj]; !ok {
				w.wgIdx[e.Obj] = len(w.wgIdx)
			}
		}
	}
	w.initWriter = resize(w.initWriter, len(w.lockIdx))
	w.initRead = resize(w.initRead, len(w.lockIdx))
	for obj, k := range w.lockIdx {
		w.initWriter[k] = -1
		if g, ok := p.writerOf(obj); ok {
			if gi, ok := w.gIdx[g]; ok {
				w.initWriter[k] = int32(gi)
			} else {
				w.initWriter[k] = -2
			}
		}
		w.initRead[k] = p.readHolds(obj)
	}
	w.initWG = resize(w.initWG, len(w.wgIdx))
	for obj, k := range w.wgIdx {
		w.initWG[k] = p.wgCounter(obj)
	}
	return w
}

// A search state is keyed by a hash of its goroutines' positions and its
// phase: the sum of each position times a random odd constant of its
// goroutine (splitmix64 of its index), updated as events run and are
// undone. Two states that collide make the search skip the second: at
// worst a witness is missed, never a wrong one reported (every schedule
// is validated).
const stateKeyPhase = 0x9e3779b97f4a7c15

func stateKeyOf(gi int32) uint64 {
	z := uint64(gi+1) * 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return (z ^ z>>31) | 1
}

// witnessSearch is the mutable state of a witness search.
type witnessSearch struct {
	w       *schedWindow
	g       witnessGoal
	pos     []int32
	writer  []int32
	readers []int32
	wg      []int64
	phase   int
	bound   []int32 // per goroutine, how far the search may run it (neededPrefix)
	path    []uint32
	seen    map[uint64]struct{}
	key     uint64 // stateKey of the current state, kept up to date by apply and undo
	budget  int
	locks   []targetLocks // per target, see deadlocked
}

// targetLocks is what deadlocked needs of one target: its goroutine and
// position in it, and per lock of the window the position in that
// goroutine of its last release and of its last acquisition before the
// target (-1 if none).
type targetLocks struct {
	gi, local        int32
	lastRel, lastAcq []int32
}

func newTargetLocks(w *schedWindow, targets []uint32) []targetLocks {
	t := w.m.t
	out := make([]targetLocks, len(targets))
	for i, x := range targets {
		r := w.rel(x)
		tl := targetLocks{gi: w.lg[r], local: w.local[r], lastRel: make([]int32, len(w.lockIdx)), lastAcq: make([]int32, len(w.lockIdx))}
		for k := range tl.lastRel {
			tl.lastRel[k], tl.lastAcq[k] = -1, -1
		}
		for l, e := range w.evs[tl.gi][:tl.local] {
			switch ev := &t.Events[e]; ev.Kind {
			case trace.KindAcquire, trace.KindRAcquire:
				tl.lastAcq[w.lockIdx[ev.Obj]] = int32(l)
			case trace.KindRelease, trace.KindRRelease:
				tl.lastRel[w.lockIdx[ev.Obj]] = int32(l)
			}
		}
		out[i] = tl
	}
	return out
}

// deadlocked reports a state from which no schedule reaches the goal: a
// goroutine holds a lock without releasing it before its pending target
// j, while another goroutine still has to take that lock before its own
// target i, which the goal runs before target j (or, for a race, right
// after it). Target j waits for target i, and target i for the lock. The
// search would otherwise find it out only by trying every interleaving
// of the other goroutines after the acquisition that made it so.
func (s *witnessSearch) deadlocked() bool {
	for j := s.phase; j < len(s.locks); j++ {
		h := &s.locks[j]
		if s.pos[h.gi] > h.local || s.pendingTarget(h.gi) != j {
			continue
		}
		for k, holder := range s.writer {
			if holder != h.gi || h.lastRel[k] >= s.pos[h.gi] {
				continue // not held, or released before target j
			}
			last := j
			if s.g.adjacent {
				last = j + 1
			}
			for i := s.phase; i <= last && i < len(s.locks); i++ {
				g := &s.locks[i]
				if g.gi != h.gi && s.pos[g.gi] <= g.local && g.lastAcq[k] >= s.pos[g.gi] {
					return true
				}
			}
		}
	}
	return false
}

// pendingTarget returns the first target not yet run of goroutine gi, or
// -1.
func (s *witnessSearch) pendingTarget(gi int32) int {
	for j := s.phase; j < len(s.locks); j++ {
		if s.locks[j].gi == gi {
			return j
		}
	}
	return -1
}

func (s *witnessSearch) executed(e uint32) bool {
	if e < s.w.start {
		return true
	}
	r := s.w.rel(e)
	return s.pos[s.w.lg[r]] > s.w.local[r]
}

// enabled reports whether the next event e of its goroutine can run now.
func (s *witnessSearch) enabled(e uint32) bool {
	w := s.w
	for _, p := range w.preds[w.rel(e)] {
		if !s.executed(p) {
			return false
		}
	}
	ev := &w.m.t.Events[e]
	switch ev.Kind {
	case trace.KindAcquire:
		k := w.lockIdx[ev.Obj]
		return s.writer[k] == -1 && s.readers[k] == 0
	case trace.KindRAcquire:
		return s.writer[w.lockIdx[ev.Obj]] == -1
	case trace.KindWGWait:
		return s.wg[w.wgIdx[ev.Obj]] == 0
	}
	return true
}

// apply runs e (enabled) and returns what undo needs.
func (s *witnessSearch) apply(e uint32) {
	w := s.w
	ev := &w.m.t.Events[e]
	gi := w.lg[w.rel(e)]
	s.pos[gi]++
	s.key += stateKeyOf(gi)
	switch ev.Kind {
	case trace.KindAcquire:
		s.writer[w.lockIdx[ev.Obj]] = gi
	case trace.KindRelease:
		s.writer[w.lockIdx[ev.Obj]] = -1
	case trace.KindRAcquire:
		s.readers[w.lockIdx[ev.Obj]]++
	case trace.KindRRelease:
		s.readers[w.lockIdx[ev.Obj]]--
	case trace.KindWGAdd:
		s.wg[w.wgIdx[ev.Obj]] += int64(ev.Arg)
	case trace.KindWGDone:
		s.wg[w.wgIdx[ev.Obj]]--
	}
	s.path = append(s.path, e)
}

func (s *witnessSearch) undo(e uint32, prevWriter int32) {
	w := s.w
	ev := &w.m.t.Events[e]
	gi := w.lg[w.rel(e)]
	s.pos[gi]--
	s.key -= stateKeyOf(gi)
	switch ev.Kind {
	case trace.KindAcquire, trace.KindRelease:
		s.writer[w.lockIdx[ev.Obj]] = prevWriter
	case trace.KindRAcquire:
		s.readers[w.lockIdx[ev.Obj]]--
	case trace.KindRRelease:
		s.readers[w.lockIdx[ev.Obj]]++
	case trace.KindWGAdd:
		s.wg[w.wgIdx[ev.Obj]] -= int64(ev.Arg)
	case trace.KindWGDone:
		s.wg[w.wgIdx[ev.Obj]]++
	}
	s.path = s.path[:len(s.path)-1]
}

// targetIndex returns i if e is goal target i, or -1.
func (s *witnessSearch) targetIndex(e uint32) int {
	return slices.Index(s.g.targets, e)
}

// dfs explores schedules from the current state; it returns true when the
// goal is reached, with the schedule in s.path.
func (s *witnessSearch) dfs() bool {
	if s.phase == len(s.g.targets) {
		return true
	}
	if s.budget <= 0 {
		return false
	}
	s.budget--
	k := s.key + uint64(s.phase)*stateKeyPhase
	if _, ok := s.seen[k]; ok {
		return false
	}
	s.seen[k] = struct{}{}
	if s.deadlocked() {
		return false
	}

	// Partial-order reduction: an enabled event that is not a target and
	// cannot disable any other goroutine's event (anything but a lock
	// acquisition or a WaitGroup.Add) commutes to the front of every
	// schedule that reaches the goal from here, so it runs at once,
	// without branching. Only acquisitions, Adds and targets interleave.
	// The states such events pass through have one way on, so they are
	// neither looked up nor kept among the states seen (the next state
	// with a choice is); each still counts against the budget.
	var moves [16]uint32
	var forced []forcedMove
	cand := s.moves(moves[:0])
	for {
		e, ok := s.forced(cand)
		if !ok {
			break
		}
		if s.budget <= 0 {
			s.undoForced(forced)
			return false
		}
		s.budget--
		forced = append(forced, forcedMove{e, s.prevWriter(e)})
		s.apply(e)
		cand = s.moves(cand[:0])
	}
	due := s.g.targets[s.phase]
	for _, e := range cand {
		if !s.enabled(e) {
			continue
		}
		prevWriter := s.prevWriter(e)
		advanced := e == due
		s.apply(e)
		if advanced {
			s.phase++
		}
		if s.dfs() {
			return true
		}
		if advanced {
			s.phase--
		}
		s.undo(e, prevWriter)
	}
	s.undoForced(forced)
	return false
}

// forcedMove is an event the partial-order reduction ran, with what undo
// needs.
type forcedMove struct {
	e          uint32
	prevWriter int32
}

func (s *witnessSearch) undoForced(forced []forcedMove) {
	for i := len(forced) - 1; i >= 0; i-- {
		s.undo(forced[i].e, forced[i].prevWriter)
	}
}

// prevWriter returns what undo needs to take back e: the writer of the
// lock e takes or gives back, -1 for other events.
func (s *witnessSearch) prevWriter(e uint32) int32 {
	if ev := &s.w.m.t.Events[e]; ev.Kind == trace.KindAcquire || ev.Kind == trace.KindRelease {
		return s.writer[s.w.lockIdx[ev.Obj]]
	}
	return -1
}

// moves appends to cand the candidate moves of the current state: the
// due target first, then the other goroutines' next events in trace
// order, so the first schedule tried stays close to the recorded one.
func (s *witnessSearch) moves(cand []uint32) []uint32 {
	due := s.g.targets[s.phase]
	for gi, evs := range s.w.evs {
		p := s.pos[gi]
		if p >= s.bound[gi] {
			continue
		}
		e := evs[p]
		if ti := s.targetIndex(e); ti >= 0 && ti != s.phase {
			continue // a later target is not due yet
		}
		if s.g.adjacent && s.phase > 0 && e != due {
			continue // the race's second access must follow at once
		}
		cand = append(cand, e)
	}
	slices.Sort(cand)
	if i := slices.Index(cand, due); i > 0 {
		copy(cand[1:i+1], cand[:i])
		cand[0] = due
	}
	return cand
}

// forced returns the first of the candidate moves that the partial-order
// reduction runs without branching, if there is one.
func (s *witnessSearch) forced(cand []uint32) (uint32, bool) {
	if s.g.adjacent && s.phase > 0 {
		return 0, false
	}
	due := s.g.targets[s.phase]
	for _, e := range cand {
		if e != due && s.targetIndex(e) < 0 && !blocking(&s.w.m.t.Events[e]) && s.enabled(e) {
			return e, true
		}
	}
	return 0, false
}

// blocking reports whether running e can make another goroutine's next
// event wait: taking a lock, or raising a WaitGroup's counter.
func blocking(e *trace.Event) bool {
	switch e.Kind {
	case trace.KindAcquire, trace.KindRAcquire:
		return true
	case trace.KindWGAdd:
		return int64(e.Arg) > 0
	}
	return false
}

// witnessWindow chooses the window of a goal: from before the outermost
// lock held at each target (the OML node of PECAN's section 6.1) to the
// last target.
func witnessWindow(t *trace.Trace, g witnessGoal) (start, end uint32, ok bool) {
	lo, hi := g.targets[0], g.targets[0]
	for _, x := range g.targets {
		lo, hi = min(lo, x), max(hi, x)
	}
	if hi-lo > maxWindow {
		return 0, 0, false
	}
	start = lo
	// Walk back over each target goroutine's events to its region's
	// beginning and past the locks it still holds at the target, so that
	// the outermost lock node is inside the window and can move. The walk
	// stops at the region's beginning, or, outside the region instance (or
	// a little before a target outside every region), at the first event
	// that is neither in a critical section still open at the target nor
	// its acquisition.
	for _, x := range g.targets {
		tx := &t.Events[x]
		depth := 0
		for i := int64(x) - 1; i >= 0 && hi-uint32(i) < maxWindow; i-- {
			e := &t.Events[i]
			if e.G != tx.G {
				continue
			}
			acquire := false
			switch e.Kind {
			case trace.KindRelease, trace.KindRRelease:
				depth++
			case trace.KindAcquire, trace.KindRAcquire:
				if depth > 0 {
					depth--
				} else {
					start = min(start, uint32(i))
					acquire = true
				}
			}
			if depth > 0 || acquire {
				continue
			}
			if e.Kind == trace.KindRegionBegin {
				start = min(start, uint32(i))
				break
			}
			outside := tx.Region != 0 && (e.Region != tx.Region || e.Inst != tx.Inst) ||
				tx.Region == 0 && uint64(x)-uint64(i) > 4*windowMargin
			if outside {
				break
			}
		}
	}
	if start > windowMargin {
		start -= windowMargin
	} else {
		start = 0
	}
	return start, hi + 1, true
}

// buildWitness searches a schedule realising g. It returns the index of
// the first event the schedule does not take in trace order (all events
// before it run first, as recorded), the schedule from there ending with
// the last target, and a reduction of it to the events the targets need.
func buildWitness(m *syncMeta, p *prefixState, g witnessGoal) (from uint32, sched, reduced []uint32, err error) {
	// The window around the violation first: from there the search
	// reaches it in few states. A small trace is then searched whole, which
	// also finds schedules that reorder events before the window.
	n := uint32(len(m.t.Events))
	var windows [][2]uint32
	if n > smallTraceLimit {
		if start, end, ok := witnessWindow(m.t, g); ok {
			windows = append(windows, [2]uint32{start, end})
		}
	}
	if n <= wholeTraceLimit {
		windows = append(windows, [2]uint32{0, n})
	}
	for _, win := range windows {
		if sched, reduced, ok := searchWindow(m, p, g, win[0], win[1]); ok {
			return win[0], sched, reduced, nil
		}
	}
	return 0, nil, nil, errNoWitness
}

// searchWindow searches a schedule realising g that runs the events before
// start as recorded.
func searchWindow(m *syncMeta, p *prefixState, g witnessGoal, start, end uint32) (sched, reduced []uint32, ok bool) {
	for _, x := range g.targets {
		if x < start || x >= end {
			return nil, nil, false
		}
	}
	p.advance(start)
	w := newWindow(m, p, start, end)
	for k, wr := range w.initWriter {
		if wr == -2 {
			// A lock held at start by a goroutine with no events in the
			// window is never released in it; acquires of it cannot run.
			w.initWriter[k] = int32(len(w.gs))
		}
	}
	if w.seen == nil {
		w.seen = make(map[uint64]struct{})
	}
	clear(w.seen)
	s := &witnessSearch{
		w:       w,
		g:       g,
		pos:     make([]int32, len(w.gs)),
		writer:  slices.Clone(w.initWriter),
		readers: slices.Clone(w.initRead),
		wg:      slices.Clone(w.initWG),
		seen:    w.seen,
		budget:  searchBudget,
	}
	all := make([]int32, len(w.gs))
	for gi := range all {
		all[gi] = int32(len(w.evs[gi]))
	}
	s.bound = neededPrefix(w, g.targets, all)
	s.locks = newTargetLocks(w, g.targets)
	if !s.dfs() {
		return nil, nil, false
	}
	return s.path, minimizeSchedule(w, g, s.path), true
}

// neededPrefix returns, per window goroutine, how many of its window
// events the targets can need: the closure of the targets under program
// order and the enabling conditions, extended, while a goroutine's prefix
// ends holding a lock that another goroutine's prefix acquires, to that
// lock's release, and for a WaitGroup.Wait to the Adds and Dones recorded
// before it. limit bounds each goroutine's prefix.
//
// Any schedule that reaches the goal stays valid when restricted to these
// prefixes (the events outside them are needed by nothing inside, and every
// lock a kept acquire waits for is released inside), so the search need
// not look further, and a found schedule can be cut down to them.
func neededPrefix(w *schedWindow, targets []uint32, limit []int32) []int32 {
	t := w.m.t
	keep := make([]int32, len(w.gs))
	var need func(e uint32)
	need = func(e uint32) {
		if e < w.start {
			return
		}
		r := w.rel(e)
		gi := w.lg[r]
		if keep[gi] > w.local[r] || w.local[r] >= limit[gi] {
			return
		}
		from := keep[gi]
		keep[gi] = w.local[r] + 1
		for k := from; k <= w.local[r]; k++ {
			ek := w.evs[gi][k]
			for _, p := range w.preds[w.rel(ek)] {
				need(p)
			}
			if ev := &t.Events[ek]; ev.Kind == trace.KindWGWait {
				for i := w.start; i < ek; i++ {
					if o := &t.Events[i]; o.Obj == ev.Obj && (o.Kind == trace.KindWGAdd || o.Kind == trace.KindWGDone) {
						need(i)
					}
				}
			}
		}
	}
	for _, x := range targets {
		need(x)
	}
	isAcq := func(k trace.Kind) bool { return k == trace.KindAcquire || k == trace.KindRAcquire }
	isRel := func(k trace.Kind) bool { return k == trace.KindRelease || k == trace.KindRRelease }
	// A lock a window goroutine holds at the window's start, for writing
	// or for reading, is held by each of its prefixes until it gives it
	// back, and another goroutine's acquisition of it (a read one waits
	// only for a writer) waits for that release inside the window. It
	// shows as a release the goroutine makes in the window before any
	// acquisition of it there.
	heldAtStart := make([]map[trace.ObjID]int, len(w.gs))
	for gi := range w.gs {
		depth := make(map[trace.ObjID]int)
		for _, e := range w.evs[gi] {
			switch ev := &t.Events[e]; ev.Kind {
			case trace.KindAcquire, trace.KindRAcquire:
				depth[ev.Obj]++
			case trace.KindRelease, trace.KindRRelease:
				if depth[ev.Obj] > 0 {
					depth[ev.Obj]--
					continue
				}
				if heldAtStart[gi] == nil {
					heldAtStart[gi] = make(map[trace.ObjID]int)
				}
				heldAtStart[gi][ev.Obj]++
			}
		}
	}
	for changed := true; changed; {
		changed = false
		acquirers := make(map[trace.ObjID]int)
		for gi := range w.gs {
			seen := make(map[trace.ObjID]bool)
			for obj := range heldAtStart[gi] {
				seen[obj] = true
				acquirers[obj]++
			}
			for _, e := range w.evs[gi][:keep[gi]] {
				if ev := &t.Events[e]; isAcq(ev.Kind) && !seen[ev.Obj] {
					seen[ev.Obj] = true
					acquirers[ev.Obj]++
				}
			}
		}
		for gi := range w.gs {
			held := maps.Clone(heldAtStart[gi])
			if held == nil {
				held = make(map[trace.ObjID]int)
			}
			for _, e := range w.evs[gi][:keep[gi]] {
				switch ev := &t.Events[e]; {
				case isAcq(ev.Kind):
					held[ev.Obj]++
				case isRel(ev.Kind):
					held[ev.Obj]--
				}
			}
			// In the order of the locks, not of the map's: need can move
			// keep[gi], where the next lock's search for its release
			// starts, so the order decides the bound, and with it
			// whether the search finds a schedule within its budget.
			for _, obj := range slices.Sorted(maps.Keys(held)) {
				n := held[obj]
				// Another prefix acquires it (or a lock held at the window's
				// start, which only its holder's release frees).
				if n <= 0 || acquirers[obj] < 2 {
					continue
				}
				for k := keep[gi]; k < limit[gi]; k++ {
					ev := &t.Events[w.evs[gi][k]]
					if ev.Obj == obj && isRel(ev.Kind) {
						need(w.evs[gi][k])
						changed = true
						break
					}
				}
			}
		}
	}
	return keep
}

// minimizeSchedule drops from a schedule the events its targets do not
// need (see neededPrefix), keeping the order of the rest.
func minimizeSchedule(w *schedWindow, g witnessGoal, sched []uint32) []uint32 {
	ran := make([]int32, len(w.gs))
	for _, e := range sched {
		ran[w.lg[w.rel(e)]]++
	}
	keep := neededPrefix(w, g.targets, ran)
	var out []uint32
	for _, e := range sched {
		r := w.rel(e)
		if w.local[r] < keep[w.lg[r]] {
			out = append(out, e)
		}
	}
	return out
}
