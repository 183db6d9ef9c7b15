package predict

import (
	"encoding/binary"
	"slices"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file tracks, per goroutine, the locks it holds (its lockset) and the
// acquisition history of each held lock: the locks it acquired afterwards
// while still holding it. Kahlon, Ivancic and Gupta's result, as restated in
// Lemma 3 of the meta-analysis paper (shared/seeds/004_4018321f03831e38.txt,
// section 3, "Pairwise reachability"), says that under nested locking two
// goroutines can be at two given points at once exactly when their locksets
// are disjoint and their acquisition histories are compatible.
//
// Go adds read locks. A RWMutex held for reading by two goroutines does not
// exclude either, so "disjoint" becomes "not conflicting" (no lock held by
// both with at least one holding it for writing), and an acquisition
// history edge only blocks when the modes conflict. The differential tests
// in meta_test.go check this extension against exhaustive enumeration.
//
// Lock states are interned: a goroutine's state (held locks, their modes
// and their acquisition histories) is a small integer, changed only by
// acquires and releases through a transition cache, so an access costs
// nothing here and the per-event state is one word that can be stored.

// maxMemo bounds the memo tables of Conflict and Compatible.
const maxMemo = 1 << 20

// memo caches a boolean per pair of ids (packed in a uint64 key, never 0
// since the ids of non-empty states are positive) in an open-addressing
// table: Compatible is asked on almost every event by the meta-analysis,
// and a Go map costs several times more. It is cleared when full, so its
// size is bounded.
type memo struct {
	keys []uint64
	vals []bool
	n    int
}

func (m *memo) get(k uint64) (bool, bool) {
	if len(m.keys) == 0 {
		return false, false
	}
	mask := uint64(len(m.keys) - 1)
	for i := (k * 0x9E3779B97F4A7C15 >> 20) & mask; ; i = (i + 1) & mask {
		switch m.keys[i] {
		case k:
			return m.vals[i], true
		case 0:
			return false, false
		}
	}
}

// reset empties the table, keeping its storage.
func (m *memo) reset() {
	clear(m.keys)
	m.n = 0
}

func (m *memo) put(k uint64, v bool) {
	if 2*(m.n+1) > len(m.keys) {
		if len(m.keys) >= 2*maxMemo {
			clear(m.keys)
			m.n = 0
		} else {
			old, oldv := m.keys, m.vals
			size := max(1024, 2*len(m.keys))
			m.keys, m.vals, m.n = make([]uint64, size), make([]bool, size), 0
			for i, ok := range old {
				if ok != 0 {
					m.put(ok, oldv[i])
				}
			}
		}
	}
	mask := uint64(len(m.keys) - 1)
	i := (k * 0x9E3779B97F4A7C15 >> 20) & mask
	for m.keys[i] != 0 && m.keys[i] != k {
		i = (i + 1) & mask
	}
	if m.keys[i] == 0 {
		m.n++
	}
	m.keys[i], m.vals[i] = k, v
}

// LockMode is how a lock is held.
type LockMode uint8

// The lock modes. Write is Lock of a Mutex or RWMutex; Read is RLock.
const (
	ModeRead LockMode = iota + 1
	ModeWrite
)

// String returns "r" or "w".
func (m LockMode) String() string {
	switch m {
	case ModeRead:
		return "r"
	case ModeWrite:
		return "w"
	}
	return "?"
}

// conflicts reports whether holds of one lock in modes a and b exclude each
// other.
func conflicts(a, b LockMode) bool { return a == ModeWrite || b == ModeWrite }

// LockHold is one element of a lockset: a lock and the mode it is held in.
type LockHold struct {
	Obj  trace.ObjID
	Mode LockMode
}

// Held is one lock a goroutine holds, with the event that acquired it.
type Held struct {
	Obj  trace.ObjID
	Mode LockMode
	Seq  uint64 // the acquire event's position in the trace
}

// LocksetID names an interned lockset; 0 is the empty lockset.
type LocksetID int32

// HistoryID names an interned lock state: a lockset together with the
// acquisition history of each held lock. 0 is "no lock held".
type HistoryID int32

// history is an interned lock state. Its entries are in acquisition order
// (outermost first).
type history struct {
	ls      LocksetID
	entries []historyEntry
	next    []transition // every transition taken from this state
	key     string       // its key in histKeys; "" for a free id (and the empty state)
}

// transition is an edge of the lock-state automaton.
type transition struct {
	obj trace.ObjID
	op  uint8
	to  HistoryID
}

// historyEntry is one held lock and the locks acquired after it while it
// was held, each with the strongest mode it was taken in.
type historyEntry struct {
	LockHold
	after AfterSet
}

// AfterSet is the acquisition history of a held lock: the locks acquired
// after it while it was held, each in the strongest mode it was taken in.
//
// An outer lock held across a long loop gains a lock at each of the
// loop's critical sections, and each gain is a new lock state. Copied
// into every state, its history made the states' memory grow with the
// square of the loop's length (a region around a loop of 1,024 critical
// sections: about 5 KB per event of the trace). A history is therefore a
// prefix of a log of holds, in the order they were gained, that the
// states along the loop share: a state's gain appends to the log its
// predecessor's history ends, and only a state that gains from a history
// another state gained from already copies the prefix. The log holds a
// lock twice when it was taken for reading, then for writing. Two
// histories of the same set, reached in different orders, are one state:
// states are interned by a hash of the set, which does not depend on the
// order (128 bits: two sets with one hash would need some 2^64 sets).
type AfterSet struct {
	log    *afterLog
	n      int32 // the holds of log that are this set's
	size   int32 // locks in the set
	h1, h2 uint64
}

// afterLog is the holds that AfterSets share, in the order they were
// gained. Once longer than afterIndexAt, an index answers Find.
type afterLog struct {
	holds []LockHold
	first map[trace.ObjID]int32 // a lock's first hold
	write map[trace.ObjID]int32 // a lock taken for reading first: its hold for writing
}

// afterIndexAt is the length of a log from which Find uses its index.
const afterIndexAt = 16

// Holds returns the holds of the set in the order they were gained; a
// lock taken for reading and then for writing is there twice. The slice
// is shared; do not modify it.
func (a AfterSet) Holds() []LockHold {
	if a.log == nil {
		return nil
	}
	return a.log.holds[:a.n]
}

// Len returns the number of locks in the set.
func (a AfterSet) Len() int { return int(a.size) }

// Find returns the strongest mode lock obj was taken in, and whether it
// is in the set.
func (a AfterSet) Find(obj trace.ObjID) (LockMode, bool) {
	if a.n == 0 {
		return 0, false
	}
	lg := a.log
	if lg.first == nil {
		var m LockMode
		found := false
		for _, h := range lg.holds[:a.n] {
			if h.Obj == obj {
				m, found = max(m, h.Mode), true
			}
		}
		return m, found
	}
	p, ok := lg.first[obj]
	if !ok || p >= a.n {
		return 0, false
	}
	if w, ok := lg.write[obj]; ok && w < a.n {
		return ModeWrite, true
	}
	return lg.holds[p].Mode, true
}

// add returns the set with h added, keeping the stronger mode.
func (a AfterSet) add(h LockHold) AfterSet {
	m, found := a.Find(h.Obj)
	if found && m >= h.Mode {
		return a
	}
	b := a
	if found {
		x1, x2 := holdHash(LockHold{h.Obj, m})
		b.h1, b.h2 = b.h1-x1, b.h2-x2
	} else {
		b.size++
	}
	x1, x2 := holdHash(h)
	b.h1, b.h2 = b.h1+x1, b.h2+x2
	if a.log == nil || int(a.n) != len(a.log.holds) {
		// A history another state gained from already: its own copy.
		lg := &afterLog{holds: make([]LockHold, a.n, a.n+1)}
		if a.log != nil {
			copy(lg.holds, a.log.holds[:a.n])
		}
		if len(lg.holds) >= afterIndexAt {
			lg.index(0)
		}
		b.log = lg
	}
	lg := b.log
	lg.holds = append(lg.holds, h)
	b.n = int32(len(lg.holds))
	switch {
	case lg.first != nil:
		lg.index(len(lg.holds) - 1)
	case len(lg.holds) >= afterIndexAt:
		lg.index(0)
	}
	return b
}

// index adds the holds of the log from position from on to its index.
func (lg *afterLog) index(from int) {
	if lg.first == nil {
		lg.first = make(map[trace.ObjID]int32, len(lg.holds))
		lg.write = make(map[trace.ObjID]int32)
	}
	for k := from; k < len(lg.holds); k++ {
		h := lg.holds[k]
		if _, ok := lg.first[h.Obj]; !ok {
			lg.first[h.Obj] = int32(k)
		} else if h.Mode == ModeWrite {
			lg.write[h.Obj] = int32(k)
		}
	}
}

// within reports whether every hold of a is in b, in no stronger mode.
func (a AfterSet) within(b AfterSet) bool {
	if a.size > b.size {
		return false
	}
	for _, x := range a.Holds() {
		if m, ok := b.Find(x.Obj); !ok || x.Mode > m {
			return false
		}
	}
	return true
}

// holdHash is the two 64-bit halves of a hold's share of a set's hash
// (splitmix64 of the lock and mode); a set's hash is their sum.
func holdHash(h LockHold) (uint64, uint64) {
	mix := func(z uint64) uint64 {
		z += 0x9e3779b97f4a7c15
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	k := uint64(h.Obj)<<2 | uint64(h.Mode)
	return mix(k), mix(k ^ 0x5851f42d4c957f2d)
}

// goLocks is one goroutine's lock state.
type goLocks struct {
	held  []Held
	depth []int32 // extra recursive acquisitions of held[i] (RLock twice)
	hist  HistoryID
}

// Locks tracks locksets and acquisition histories over a trace, one event
// at a time. The zero value is not usable; call NewLocks.
type Locks struct {
	gIndex goIndex
	gs     []goLocks
	lastG  trace.GoID
	lastI  int

	histories []history
	histKeys  map[string]HistoryID
	freeIDs   []HistoryID        // ids of collected states, reused by internHistory
	tcache    []cachedTransition // in front of trans, see transition
	locksets  [][]LockHold       // sorted by Obj
	lsKeys    map[string]LocksetID
	compat    memo
	conflict  memo
	buf       []byte

	// NonNested counts releases of a lock that was not the innermost one
	// held, and releases of a lock held by another goroutine. Lemma 3
	// assumes nested locking; when this is non-zero, compatibility is an
	// approximation.
	NonNested int
}

// NewLocks returns a Locks ready for the trace's first event.
func NewLocks() *Locks {
	l := &Locks{
		lastI:    -1,
		histKeys: make(map[string]HistoryID),
		lsKeys:   make(map[string]LocksetID),
	}
	l.locksets = append(l.locksets, nil)
	l.lsKeys[""] = 0
	l.histories = append(l.histories, history{})
	l.histKeys[""] = 0
	return l
}

func (l *Locks) index(g trace.GoID) int {
	if l.lastI >= 0 && g == l.lastG {
		return l.lastI
	}
	i, ok := l.gIndex.get(g)
	if !ok {
		i = len(l.gs)
		l.gIndex.add(g, i)
		l.gs = append(l.gs, goLocks{})
	}
	l.lastG, l.lastI = g, i
	return i
}

// Step applies e. Afterwards the accessors describe e's goroutine just after
// e: after an acquire the lock is held, after a release it is not, and for
// an access they give the locks held at the access.
func (l *Locks) Step(e *trace.Event) {
	switch e.Kind {
	case trace.KindAcquire:
		l.acquire(l.index(e.G), e.Obj, ModeWrite, e.Seq)
	case trace.KindRAcquire:
		l.acquire(l.index(e.G), e.Obj, ModeRead, e.Seq)
	case trace.KindRelease, trace.KindRRelease:
		l.release(l.index(e.G), e.Obj)
	}
}

func (l *Locks) acquire(gi int, obj trace.ObjID, mode LockMode, seq uint64) {
	g := &l.gs[gi]
	for k := range g.held {
		if g.held[k].Obj == obj {
			// A recursive RLock (or a lock taken twice, which deadlocks in
			// Go): as the meta-analysis tool does for Java's reentrant
			// locks (seed 004, section 5), only the outermost acquisition
			// counts, which keeps locking nested.
			g.depth[k]++
			return
		}
	}
	g.held = append(g.held, Held{Obj: obj, Mode: mode, Seq: seq})
	g.depth = append(g.depth, 0)
	op := uint8(1)
	if mode == ModeWrite {
		op = 2
	}
	g.hist = l.transition(g.hist, obj, op)
}

func (l *Locks) release(gi int, obj trace.ObjID) {
	g := &l.gs[gi]
	k := slices.IndexFunc(g.held, func(h Held) bool { return h.Obj == obj })
	if k < 0 {
		// Go lets one goroutine unlock a mutex another locked: the lock
		// is released from its holder.
		for oi := range l.gs {
			if oi == gi {
				continue
			}
			o := &l.gs[oi]
			if j := slices.IndexFunc(o.held, func(h Held) bool { return h.Obj == obj && h.Mode == ModeWrite }); j >= 0 {
				l.NonNested++
				l.drop(o, j, obj)
				return
			}
		}
		return
	}
	if k != len(g.held)-1 && g.depth[k] == 0 {
		l.NonNested++
	}
	l.drop(g, k, obj)
}

func (l *Locks) drop(g *goLocks, k int, obj trace.ObjID) {
	if g.depth[k] > 0 {
		g.depth[k]--
		return
	}
	g.held = slices.Delete(g.held, k, k+1)
	g.depth = slices.Delete(g.depth, k, k+1)
	g.hist = l.transition(g.hist, obj, 3)
}

// transition returns the state reached from state from by acquiring (op 1
// read, 2 write) or releasing (op 3) obj, computing and interning it on the
// first occurrence.
func (l *Locks) transition(from HistoryID, obj trace.ObjID, op uint8) HistoryID {
	// A state's list holds every transition taken from it. Most states
	// have a few, and scanning them beats hashing; the busiest (no lock
	// held, one lock held) have more, and a direct-mapped table answers
	// for them before the scan.
	next := l.histories[from].next
	var slot *cachedTransition
	if len(next) > maxShortTransitions {
		if l.tcache == nil {
			l.tcache = make([]cachedTransition, 1<<transCacheBits)
		}
		h := (uint64(from)<<32 ^ uint64(obj)<<2 ^ uint64(op)) * 0x9E3779B97F4A7C15
		slot = &l.tcache[h>>(64-transCacheBits)]
		if slot.valid && slot.from == from && slot.obj == obj && slot.op == op {
			return slot.to
		}
	}
	for _, tr := range next {
		if tr.obj == obj && tr.op == op {
			if slot != nil {
				*slot = cachedTransition{valid: true, from: from, obj: obj, op: op, to: tr.to}
			}
			return tr.to
		}
	}
	// The first time: compute the state it leads to.
	old := l.histories[from].entries
	var entries []historyEntry
	if op == 3 {
		for _, en := range old {
			if en.Obj != obj {
				entries = append(entries, en)
			}
		}
	} else {
		mode := LockMode(op)
		entries = make([]historyEntry, 0, len(old)+1)
		for _, en := range old {
			// Every held lock's history gains obj.
			en.after = en.after.add(LockHold{obj, mode})
			entries = append(entries, en)
		}
		entries = append(entries, historyEntry{LockHold: LockHold{obj, mode}})
	}
	to := l.internHistory(entries)
	h := &l.histories[from]
	h.next = append(h.next, transition{obj, op, to})
	if slot != nil {
		*slot = cachedTransition{valid: true, from: from, obj: obj, op: op, to: to}
	}
	return to
}

// maxShortTransitions is the most transitions of a state that transition
// scans without asking its direct-mapped table first.
const maxShortTransitions = 8

// transCacheBits sizes Locks' direct-mapped table of transitions: 4096
// entries, 96 KB.
const transCacheBits = 12

// cachedTransition is one entry of Locks' direct-mapped table of
// transitions.
type cachedTransition struct {
	obj   trace.ObjID
	from  HistoryID
	to    HistoryID
	op    uint8
	valid bool
}

func (l *Locks) internHistory(entries []historyEntry) HistoryID {
	b := l.buf[:0]
	for _, en := range entries {
		b = binary.LittleEndian.AppendUint64(b, uint64(en.Obj))
		b = append(b, byte(en.Mode))
		b = binary.LittleEndian.AppendUint32(b, uint32(en.after.size))
		b = binary.LittleEndian.AppendUint64(b, en.after.h1)
		b = binary.LittleEndian.AppendUint64(b, en.after.h2)
	}
	l.buf = b
	if id, ok := l.histKeys[string(b)]; ok {
		return id
	}
	set := make([]LockHold, len(entries))
	for k, en := range entries {
		set[k] = en.LockHold
	}
	slices.SortFunc(set, func(a, b LockHold) int {
		switch {
		case a.Obj < b.Obj:
			return -1
		case a.Obj > b.Obj:
			return 1
		}
		return 0
	})
	h := history{ls: l.internLockset(set), entries: entries, key: string(b)}
	if n := len(l.freeIDs); n > 0 {
		id := l.freeIDs[n-1]
		l.freeIDs = l.freeIDs[:n-1]
		l.histories[id] = h
		l.histKeys[h.key] = id
		return id
	}
	id := HistoryID(len(l.histories))
	l.histories = append(l.histories, h)
	l.histKeys[h.key] = id
	return id
}

func (l *Locks) internLockset(set []LockHold) LocksetID {
	var b []byte
	for _, h := range set {
		b = binary.LittleEndian.AppendUint64(b, uint64(h.Obj))
		b = append(b, byte(h.Mode))
	}
	if id, ok := l.lsKeys[string(b)]; ok {
		return id
	}
	id := LocksetID(len(l.locksets))
	l.locksets = append(l.locksets, set)
	l.lsKeys[string(b)] = id
	return id
}

// Lockset returns the lockset of goroutine g now (after the last Step).
func (l *Locks) Lockset(g trace.GoID) LocksetID {
	return l.histories[l.gs[l.index(g)].hist].ls
}

// History returns the lock state of goroutine g now: its lockset and the
// acquisition history of each lock it holds.
func (l *Locks) History(g trace.GoID) HistoryID {
	return l.gs[l.index(g)].hist
}

// Held returns the locks g holds now, outermost first. The slice is owned
// by Locks and valid until the next Step.
func (l *Locks) Held(g trace.GoID) []Held {
	return l.gs[l.index(g)].held
}

// Outermost returns the outermost lock g holds now: the lock node PECAN's
// schedule generation moves (shared/seeds/003_50220ead9b146295.txt, section
// 6.1, Algorithms 3 and 4).
func (l *Locks) Outermost(g trace.GoID) (Held, bool) {
	h := l.gs[l.index(g)].held
	if len(h) == 0 {
		return Held{}, false
	}
	return h[0], true
}

// Locks returns the members of lockset id, sorted by Obj. The slice is
// shared; do not modify it.
func (l *Locks) Locks(id LocksetID) []LockHold { return l.locksets[id] }

// HistoryLockset returns the lockset of lock state h.
func (l *Locks) HistoryLockset(h HistoryID) LocksetID { return l.histories[h].ls }

// AcquiredAfter returns the acquisition history of lock obj in state h: the
// locks acquired after obj while it was held, and whether obj is held in h
// at all.
func (l *Locks) AcquiredAfter(h HistoryID, obj trace.ObjID) (AfterSet, bool) {
	for _, en := range l.histories[h].entries {
		if en.Obj == obj {
			return en.after, true
		}
	}
	return AfterSet{}, false
}

// Conflict reports whether two locksets exclude each other: some lock is in
// both, held for writing in at least one. Two critical sections whose
// locksets conflict cannot overlap.
func (l *Locks) Conflict(a, b LocksetID) bool {
	if a == 0 || b == 0 {
		return false
	}
	if a > b {
		a, b = b, a
	}
	key := uint64(a)<<32 | uint64(b)
	if c, ok := l.conflict.get(key); ok {
		return c
	}
	c := LocksetsConflict(l.locksets[a], l.locksets[b])
	l.conflict.put(key, c)
	return c
}

// LocksetsConflict reports whether two locksets, each sorted by Obj, hold a
// common lock with at least one of them holding it for writing.
func LocksetsConflict(a, b []LockHold) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].Obj < b[j].Obj:
			i++
		case a[i].Obj > b[j].Obj:
			j++
		default:
			if conflicts(a[i].Mode, b[j].Mode) {
				return true
			}
			i++
			j++
		}
	}
	return false
}

// Compatible reports whether two goroutines can be in lock states a and b
// at the same time: their locksets do not conflict and their acquisition
// histories are compatible, that is, there are no locks p, q such that the
// first holds p and acquired q after it while the second holds q and
// acquired p after it, each pair of holds conflicting (Lemma 3 of seed 004,
// section 3, extended to read locks).
func (l *Locks) Compatible(a, b HistoryID) bool {
	if a == 0 || b == 0 {
		return true
	}
	if a > b {
		a, b = b, a
	}
	key := uint64(a)<<32 | uint64(b)
	if c, ok := l.compat.get(key); ok {
		return c
	}
	c := l.compatible(&l.histories[a], &l.histories[b])
	l.compat.put(key, c)
	return c
}

func (l *Locks) compatible(a, b *history) bool {
	if l.Conflict(a.ls, b.ls) {
		return false
	}
	for _, p := range a.entries {
		for _, q := range b.entries {
			qa, ok := p.after.Find(q.Obj) // the first took q while holding p
			if !ok || !conflicts(qa, q.Mode) {
				continue
			}
			pb, ok := q.after.Find(p.Obj) // the second took p while holding q
			if ok && conflicts(pb, p.Mode) {
				return false
			}
		}
	}
	return true
}

// Covers reports whether lock state a is compatible with every state b is
// compatible with: a holds no lock that b does not hold, none in a stronger
// mode, and each lock's acquisition history in a is contained in its
// history in b, again in no stronger mode. Compatible only grows as locks,
// modes and history entries are removed (the lockset check and both halves
// of Lemma 3's cycle check are monotone), so this is sufficient.
func (l *Locks) Covers(a, b HistoryID) bool {
	switch {
	case a == b || a == 0:
		return true
	case b == 0:
		return false
	}
	hb := l.histories[b].entries
	for _, p := range l.histories[a].entries {
		k := slices.IndexFunc(hb, func(q historyEntry) bool { return q.Obj == p.Obj })
		if k < 0 || p.Mode > hb[k].Mode || !p.after.within(hb[k].after) {
			return false
		}
	}
	return true
}

// States returns the number of lock states interned now: every distinct
// state seen, less those Collect forgot.
func (l *Locks) States() int { return len(l.histories) - len(l.freeIDs) }

// idBound returns the bound of the lock state ids: every HistoryID is
// below it, collected ones included, so that tables indexed by id can be
// sized by it (States is smaller once Collect has freed ids).
func (l *Locks) idBound() int { return len(l.histories) }

// Collect forgets every lock state that no goroutine is in now and that
// mark does not report, so that their ids can be reused. mark is called
// once with a function that marks a state as live; the caller reports
// every state it stores. Afterwards a forgotten id may name a new state,
// so the caller must not keep any id it did not mark.
//
// The table of states is otherwise bounded only by the locks and their
// nesting, and on a long run with varied nesting it keeps growing (the
// acquisition history of an outer lock gains every lock taken inside it).
// A streaming analysis that stores the states of its summaries calls
// Collect from time to time so that what it keeps is the live states
// alone (meta.go). Collect returns the number of states forgotten.
func (l *Locks) Collect(mark func(live func(HistoryID))) int {
	live := make([]uint64, (len(l.histories)+63)/64)
	set := func(h HistoryID) { live[h/64] |= 1 << (h % 64) }
	isLive := func(h HistoryID) bool { return live[h/64]&(1<<(h%64)) != 0 }
	set(0)
	for _, g := range l.gs {
		set(g.hist)
	}
	mark(set)
	for _, id := range l.freeIDs {
		set(id) // already free (and no transition leads there)
	}
	forgot := 0
	for id := range l.histories {
		h := &l.histories[id]
		if !isLive(HistoryID(id)) {
			delete(l.histKeys, h.key)
			*h = history{}
			l.freeIDs = append(l.freeIDs, HistoryID(id))
			forgot++
		}
	}
	if forgot == 0 {
		return 0
	}
	// Transitions into forgotten states are dropped; they are recomputed
	// on their next use. The caches keyed by ids are cleared.
	for id := range l.histories {
		h := &l.histories[id]
		h.next = slices.DeleteFunc(h.next, func(tr transition) bool { return !isLive(tr.to) })
	}
	clear(l.tcache)
	l.compat.reset()
	return forgot
}
