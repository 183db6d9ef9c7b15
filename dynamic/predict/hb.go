package predict

import (
	"slices"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file computes the happens-before relation of a trace with vector
// clocks, one event at a time, following the Go memory model
// (https://go.dev/ref/mem) for the synchronisation the recorder sees. The
// vocabulary (acquire, release, release-merge on an object; a goroutine
// starts from its parent's clock) is runtime/race's.
//
// Locks are not happens-before edges by default: the predictors reorder
// critical sections and treat locks with locksets (locks.go), which is the
// hybrid model of PECAN (shared/seeds/003_50220ead9b146295.txt, section
// 4.2). HBOptions.LockEdges adds them for observed mode, which asks about the
// recorded order itself.
//
// Clocks follow FastTrack's epoch discipline: a goroutine's own component
// is incremented after each synchronisation operation, so every event has
// an epoch (goroutine, own component) and "a happens before b" is one
// comparison of a's epoch with b's clock. Memory is one clock per goroutine
// and per synchronisation object, plus the in-flight messages of channels;
// it does not grow with the trace's length.
//
// A clock is as wide as the goroutines seen, and a test run that starts
// tens of thousands of short-lived goroutines (a worker pool's) makes
// every join that wide. Tree clocks (Mathur et al.) would make a join's
// cost that of what it changes; HB gets most of that more cheaply: each
// leaf of clockFan components has an identity that the clocks it is
// copied or learned into keep, and so does each block of clockFan leaves;
// a join passes over the blocks and the leaves whose identities are equal
// (HB.ids), and costs a word per block and the leaves that differ. On
// alitto/pond's tests (18.9M events, 89K goroutines) avcheck predict took
// 43 s, 22 s with the identities.

// VC is a vector clock indexed by dense goroutine index (HB.Index).
// Components past the end of the slice are zero.
type VC []uint32

// LEQ reports whether a is pointwise at most b.
func (a VC) LEQ(b VC) bool {
	for i, x := range a {
		if x == 0 {
			continue
		}
		if i >= len(b) || x > b[i] {
			return false
		}
	}
	return true
}

// Get returns component i, zero past the end.
func (a VC) Get(i int) uint32 {
	if i < len(a) {
		return a[i]
	}
	return 0
}

// Clone returns a copy of a that the caller owns.
func (a VC) Clone() VC {
	if a == nil {
		return nil
	}
	c := make(VC, len(a))
	copy(c, a)
	return c
}

// join sets *a to the pointwise maximum of *a and b, growing *a if needed.
func (a *VC) join(b VC) {
	if len(b) > len(*a) {
		a.grow(len(b))
	}
	x := *a
	for i, v := range b {
		if v > x[i] {
			x[i] = v
		}
	}
}

// grow extends *a with zeros to length n, reusing capacity.
func (a *VC) grow(n int) {
	if n <= len(*a) {
		return
	}
	if n <= cap(*a) {
		old := len(*a)
		*a = (*a)[:n]
		clear((*a)[old:])
		return
	}
	c := make(VC, n, n+n/2+4)
	copy(c, *a)
	*a = c
}

// Epoch names an event by its goroutine's dense index and that goroutine's
// own clock component at the event.
type Epoch struct {
	G int
	C uint32
}

// Before reports whether the event with epoch ep happens before (or is) an
// event whose clock is vc.
func (ep Epoch) Before(vc VC) bool {
	return ep.C <= vc.Get(ep.G)
}

// HBOptions configures HB.
type HBOptions struct {
	// LockEdges makes each Unlock (RUnlock) happen before every later Lock,
	// and each Unlock before every later RLock: the order observed, as
	// observed mode needs. Predictors leave it off and use locksets.
	LockEdges bool
	// Object describes an object id, typically trace.Reader.Object or
	// (*trace.Trace).Object. It supplies channel capacities; without it,
	// or for a channel whose kind is not known, the capacity edge (the
	// k-th receive before the (k+C)-th send completes) is omitted, which
	// only loses orderings.
	Object func(trace.ObjID) trace.Object
}

// HB computes the happens-before clocks of a trace's events in one pass.
// The zero value is not usable; call NewHB.
type HB struct {
	opts HBOptions

	gIndex goIndex
	clocks []VC // per dense goroutine index
	lastG  trace.GoID
	lastI  int // dense index of lastG, -1 if none

	objIndex map[trace.ObjID]int
	objs     []syncObj

	ep   Epoch     // epoch of the last event stepped
	adv  int       // goroutine whose clock the last Step advanced besides its own, or -1
	free []idClock // recycled clocks of delivered messages
	// spare holds clocks of ended goroutines, at most maxSpare, for
	// new goroutines to reuse: in a run of many short-lived goroutines,
	// one ends about as often as another starts.
	spare []spareClock
	// tree holds the clocks of closed channels as snapshots that share
	// what they have in common (clocktree.go), and refs, per goroutine,
	// its clock's last snapshot there, the base of its next. A run that
	// closes a channel per task (a context's, a future's) closes about
	// as many as it starts goroutines, each with a clock as wide as the
	// goroutines before it: kept flat, their clocks grew with the square
	// of the goroutines (20M words after 2.8M events of a worker pool's
	// tests, 22,628 closes; killed at 18 GB after 19M). A goroutine's
	// clock at a close differs from its parent's at its fork, or its
	// own at its previous close, in a few components.
	tree clockTree
	refs []clockRef
	// now counts the steps, and vers holds, per goroutine, the step at
	// which each leaf of its clock (clockFan components, as in the
	// tree) last changed: a snapshot taken at step s differs from the
	// clock only in the leaves changed since, which are all a new
	// snapshot based on it compares (clockTree.snapshotSince), not the
	// whole clock, as wide as the goroutines. The steps come in blocks
	// as the identities do (idBlock), each led by the last step of any
	// of its leaves, so that a search for the leaves changed since a
	// step passes over a block of clockFan of them in one word. A new
	// goroutine takes its parent's, with its parent's clock. refSince is
	// the step of each goroutine's refs.
	now      uint64
	vers     [][]uint64
	refSince []uint64
	tmp      VC // a closed channel's clock, read from the tree
	// ids holds, per goroutine, the identity of each leaf of its clock:
	// two leaves with one identity hold the same components, so a join
	// passes over a leaf whose identity its source's has (learn). A leaf
	// gets a new identity (lastID counts them) when its components
	// change, or the source's when the join leaves it equal to the
	// source's; identity 0 is the all-zero leaf. A clock published to an
	// object, or sent in a message, carries its leaves' identities with
	// it. A goroutine's clock learns, from a message or an object, what
	// its sender knew of thousands of goroutines that have ended, most
	// of which it knows already: on a worker pool's tests (89K
	// goroutines in 18.9M events) the joins compared clocks as wide as
	// the goroutines, and took half of the prediction's time. The
	// identities come in blocks (idBlock).
	ids    [][]uint64
	lastID uint64
}

// leafIDs turns the leaf identities of HB.ids on; TestHBLeafIDs
// compares the clocks with them off.
var leafIDs = true

// maxSpare bounds HB.spare.
const maxSpare = 8

// spareClock is an ended goroutine's clock, with the arrays of its
// leaves' steps and identities, kept for a new goroutine to reuse.
type spareClock struct {
	vc        VC
	vers, ids []uint64
}

// idClock is a clock with its leaves' identities (HB.ids), as a message
// carries it.
type idClock struct {
	vc  VC
	ids []uint64
}

// syncObj is the happens-before state of one synchronisation object. Only
// the fields its kind uses are set.
type syncObj struct {
	vc  VC         // release clock: lock (write), WaitGroup, Cond, Once, atomic address
	ids []uint64   // the identities of vc's leaves (HB.ids)
	rvc VC         // RUnlock releases of a RWMutex, acquired by Lock only
	ch  *chanState // for a channel
	// owner is the goroutine (its index + 1; 0 for none) whose clock vc
	// is a copy of, as it was at step ownerStep: vc is within that
	// goroutine's clock, which only grows, and differs from it in the
	// leaves changed at ownerStep or later. A counter or a flag that
	// one goroutine updates again and again (86% of the atomic
	// operations of a worker pool's tests) then costs a goroutine's
	// learning nothing, and the object's update the leaves that changed,
	// not a join as wide as every goroutine ever started.
	owner     int
	ownerStep uint64
}

// chanState holds a channel's messages in flight and the clocks of
// receives that a later send must wait for.
type chanState struct {
	capKnown bool
	cap      uint64
	sends    map[uint64]idClock // clock of send k, until receive k
	recvs    map[uint64]idClock // clock of receive k, until send k+cap
	waiting  map[uint64]int     // receive k -> goroutine whose send k+cap was recorded first
	// closed is the closer's clock at the close, in HB.tree, if isClosed.
	closed   clockRef
	isClosed bool
}

// NewHB returns an HB ready for the trace's first event.
func NewHB(opts HBOptions) *HB {
	return &HB{
		opts:     opts,
		tree:     newClockTree(),
		objIndex: make(map[trace.ObjID]int),
		lastI:    -1,
		adv:      -1,
	}
}

// Index returns the dense index of goroutine g, assigning the next one if g
// has not been seen. A new goroutine (one not created by a recorded Fork,
// such as the test's main goroutine) starts with only its own component.
func (h *HB) Index(g trace.GoID) int {
	if h.lastI >= 0 && g == h.lastG {
		return h.lastI
	}
	i, ok := h.gIndex.get(g)
	if !ok {
		i = len(h.clocks)
		h.gIndex.add(g, i)
		var sp spareClock
		if n := len(h.spare); n > 0 {
			sp = h.spare[n-1]
			h.spare = h.spare[:n-1]
		}
		c, v, ids := sp.vc[:0], sp.vers[:0], sp.ids[:0]
		c.grow(i + 1)
		c[i] = 1 // epochs start at 1 so that a zero component means "nothing seen"
		h.clocks = append(h.clocks, c)
		h.refs = append(h.refs, clockRef{})
		h.refSince = append(h.refSince, 0)
		h.vers = append(h.vers, v)
		h.ids = append(h.ids, ids)
		h.mark(i, i)
	}
	h.lastG, h.lastI = g, i
	return i
}

// Goroutines returns the number of goroutines seen so far; dense indices
// are 0 to Goroutines()-1.
func (h *HB) Goroutines() int { return len(h.clocks) }

// Clock returns the current clock of the goroutine with dense index i,
// owned by HB and valid until the next Step; nil once the goroutine has
// ended.
func (h *HB) Clock(i int) VC { return h.clocks[i] }

// Advanced returns the dense index of a goroutine other than the stepping
// one whose clock the last Step advanced, or -1. This happens when a
// receive completes a send recorded earlier (the sender learns the
// receiver's clock); engines that cache clocks refresh that goroutine's.
func (h *HB) Advanced() int { return h.adv }

// Epoch returns the epoch of the event last passed to Step.
func (h *HB) Epoch() Epoch { return h.ep }

// Step applies e and returns the clock of e's goroutine at e: every event
// that happens before e (and e itself) has an epoch at most this clock. The
// clock is owned by HB and valid until the next Step; Clone it to keep it.
func (h *HB) Step(e *trace.Event) VC {
	h.now++
	i := h.Index(e.G)
	h.adv = -1
	switch e.Kind {
	case trace.KindRead, trace.KindWrite, trace.KindRegionBegin, trace.KindRegionEnd:
		// Plain events neither publish nor learn.
		h.ep = Epoch{i, h.clocks[i][i]}
		return h.clocks[i]

	case trace.KindEnd:
		// The goroutine has no event after its end (the validator says
		// so), and what it published is in the objects' clocks: its own
		// clock is no longer needed. The epochs of its events stay
		// comparable with every clock. Dropping it keeps the memory
		// of a trace of many short-lived goroutines, each of whose
		// clocks grows as wide as the goroutines before it, from
		// growing with their square: on a worker pool's tests (9,697
		// goroutines in 2.8M events), 95% of the clocks' words were
		// those of ended goroutines.
		h.ep = Epoch{i, h.clocks[i][i]}
		c := h.clocks[i]
		if len(h.spare) < maxSpare {
			h.spare = append(h.spare, spareClock{c, h.vers[i], h.ids[i]})
		}
		h.clocks[i], h.vers[i], h.ids[i] = nil, nil, nil
		return c

	case trace.KindFork:
		n := len(h.clocks)
		c := h.Index(trace.GoID(e.Arg))
		h.lastG, h.lastI = e.G, i
		switch {
		case c == n:
			// A new goroutine: its clock is its parent's and its own
			// component, and so are its leaves' steps and the base of
			// its snapshots.
			own := h.clocks[c][c]
			h.clocks[c] = append(h.clocks[c][:0], h.clocks[i]...)
			h.clocks[c].grow(c + 1)
			h.clocks[c][c] = own
			h.vers[c] = append(h.vers[c][:0], h.vers[i]...)
			h.ids[c] = append(h.ids[c][:0], h.ids[i]...)
			// The parent is snapshotted here, so that the child's
			// snapshots (at its closes) differ from their base in what
			// it learned since: based on an older snapshot of its
			// parent's, each would copy what the parent learned from
			// every task since, and the tree grew by a third on a
			// worker pool's trace.
			h.refs[c], h.refSince[c] = h.snapRef(i), h.refSince[i]
			h.mark(c, c)
		case h.clocks[c] != nil:
			h.learn(c, h.clocks[i], h.idsOf(i))
		}
		h.release(i)
		return h.clocks[i]

	case trace.KindAcquire, trace.KindRAcquire:
		if h.opts.LockEdges {
			o := h.obj(e.Obj)
			h.learnObj(i, o)
			if e.Kind == trace.KindAcquire {
				h.learn(i, o.rvc, nil)
			}
		}
		h.ep = Epoch{i, h.clocks[i][i]}
		return h.clocks[i]

	case trace.KindRelease:
		if h.opts.LockEdges {
			h.publish(i, h.obj(e.Obj), false)
		}
		h.release(i)
		return h.clocks[i]

	case trace.KindRRelease:
		if h.opts.LockEdges {
			h.obj(e.Obj).rvc.join(h.clocks[i])
		}
		h.release(i)
		return h.clocks[i]

	case trace.KindSend:
		h.send(i, e)
	case trace.KindRecv:
		h.recv(i, e)
	case trace.KindClose:
		ch := h.chanOf(e.Obj)
		if ch.isClosed {
			// Closed twice (the trace's program panicked): both
			// closers' clocks, which are no goroutine's, so not the
			// base of the goroutine's next snapshot.
			vc := h.clocks[i].Clone()
			h.tree.joinInto(&vc, ch.closed)
			ch.closed = h.tree.snapshot(h.refs[i], vc)
		} else {
			ch.closed, ch.isClosed = h.snapRef(i), true
		}

	case trace.KindWGAdd:
		// Add with a negative delta is a Done; a positive Add publishes
		// nothing a Wait must see.
		if int64(e.Arg) < 0 {
			h.publish(i, h.obj(e.Obj), false)
		}
	case trace.KindWGDone:
		h.publish(i, h.obj(e.Obj), false)
	case trace.KindWGWait:
		h.learnObj(i, h.obj(e.Obj))

	case trace.KindCondSignal, trace.KindCondBroadcast:
		// Which Wait a Signal wakes is not recorded. A Wait that returns
		// acquires every Signal and Broadcast recorded before it: a
		// superset of the true edge, so HB orders at least what the run
		// ordered, and a predictor never reorders a woken Wait before the
		// notification that woke it.
		h.publish(i, h.obj(e.Obj), false)
	case trace.KindCondWait:
		h.learnObj(i, h.obj(e.Obj))

	case trace.KindOnceDo:
		// The call that ran the function (Arg 1) is recorded when Do
		// returns, after the function; every other Do returns after it.
		o := h.obj(e.Obj)
		if e.Arg == 1 {
			h.publish(i, o, false)
		} else {
			h.learnObj(i, o)
		}

	case trace.KindAtomicLoad:
		h.learnObj(i, h.obj(e.Obj))
	case trace.KindAtomicStore:
		// Release-merge, as runtime/race does: a later load acquires every
		// earlier store on the address, a superset of "the store it read".
		h.publish(i, h.obj(e.Obj), false)
	case trace.KindAtomicRMW:
		o := h.obj(e.Obj)
		h.learnObj(i, o)
		h.publish(i, o, true)

	default:
		h.ep = Epoch{i, h.clocks[i][i]}
		return h.clocks[i]
	}
	h.release(i)
	return h.clocks[i]
}

// release records the epoch of the current event and then advances
// goroutine i's own component, so that events after a synchronisation
// operation are not covered by what it published.
func (h *HB) release(i int) {
	h.ep = Epoch{i, h.clocks[i][i]}
	h.clocks[i][i]++
	h.mark(i, i)
}

func (h *HB) obj(id trace.ObjID) *syncObj {
	k, ok := h.objIndex[id]
	if !ok {
		k = len(h.objs)
		h.objIndex[id] = k
		h.objs = append(h.objs, syncObj{})
	}
	return &h.objs[k]
}

func (h *HB) chanOf(id trace.ObjID) *chanState {
	o := h.obj(id)
	if o.ch == nil {
		ch := &chanState{
			sends:   make(map[uint64]idClock),
			recvs:   make(map[uint64]idClock),
			waiting: make(map[uint64]int),
		}
		if h.opts.Object != nil {
			if ob := h.opts.Object(id); ob.Kind == trace.ObjChan && ob.Cap >= 0 {
				ch.capKnown, ch.cap = true, uint64(ob.Cap)
			}
		}
		o.ch = ch
	}
	return o.ch
}

// send applies the k-th send on a channel: it publishes the sender's clock
// for the k-th receive, and the send completes only after receive k-cap.
// The recorder writes a send before its receive completes, so that receive
// may come later in the trace; then the sender learns its clock when it is
// stepped (see recv).
func (h *HB) send(i int, e *trace.Event) {
	ch := h.chanOf(e.Obj)
	k := e.Arg
	ch.sends[k] = h.copyClock(i)
	if !ch.capKnown || k <= ch.cap {
		return
	}
	r := k - ch.cap
	if c, ok := ch.recvs[r]; ok {
		h.learn(i, c.vc, c.ids)
		delete(ch.recvs, r)
		h.free = append(h.free, c)
		return
	}
	ch.waiting[r] = i
}

// recv applies the receive of message k (Arg) or, with Arg 0, a receive
// that returned because the channel was closed.
func (h *HB) recv(i int, e *trace.Event) {
	ch := h.chanOf(e.Obj)
	k := e.Arg
	if k == 0 {
		if ch.isClosed {
			h.tmp = h.tmp[:0]
			h.tree.joinInto(&h.tmp, ch.closed)
			h.learn(i, h.tmp, nil)
		}
		return
	}
	if c, ok := ch.sends[k]; ok {
		h.learn(i, c.vc, c.ids)
		delete(ch.sends, k)
		h.free = append(h.free, c)
	}
	if !ch.capKnown {
		return
	}
	if s, ok := ch.waiting[k]; ok {
		// The send k+cap was recorded first; its goroutine's events from
		// now on come after this receive. (Its events recorded between the
		// send and this receive do not get the edge.)
		delete(ch.waiting, k)
		if h.clocks[s] != nil { // not ended since
			h.learn(s, h.clocks[i], h.idsOf(i))
			h.adv = s
		}
		return
	}
	ch.recvs[k] = h.copyClock(i)
}

// snapRef snapshots goroutine i's clock in the tree, from the leaves
// changed since its last snapshot there, and returns it.
func (h *HB) snapRef(i int) clockRef {
	h.refs[i] = h.tree.snapshotSince(h.refs[i], h.clocks[i], h.vers[i], h.refSince[i])
	h.refSince[i] = h.now
	h.now++ // the changes after the snapshot come after it
	return h.refs[i]
}

// objOwners turns the owner shortcut of syncObj on; TestHBObjOwners
// compares the clocks with it off.
var objOwners = true

// learnObj joins the release clock of o into goroutine i's clock.
func (h *HB) learnObj(i int, o *syncObj) {
	if o.owner != i+1 || !objOwners {
		h.learn(i, o.vc, o.ids)
	}
}

// publish joins goroutine i's clock into the release clock of o; known
// says that i's clock already holds o's (it has just learned it).
func (h *HB) publish(i int, o *syncObj, known bool) {
	x, xids := h.clocks[i], h.idsOf(i)
	switch {
	case !objOwners:
		h.joinObj(o, x, xids)
		return
	case o.owner == i+1:
		// vc is x as it was at ownerStep: copy the leaves changed since.
		o.vc.grow(len(x))
		o.ids = growBlocks(o.ids, len(o.vc))
		v := h.vers[i]
		nl := (len(x) + clockMask) >> clockBits
		for b := 0; b<<clockBits < nl; b++ {
			if v[b*idBlock] < o.ownerStep {
				continue
			}
			for l := b << clockBits; l < min((b+1)<<clockBits, nl); l++ {
				if li := leafID(l); v[li] >= o.ownerStep {
					lo := l << clockBits
					copy(o.vc[lo:min(lo+clockFan, len(x))], x[lo:min(lo+clockFan, len(x))])
					o.ids[li] = xids[li]
				}
			}
			h.blockCopied(o.ids, xids, b)
		}
	case known || len(o.vc) == 0:
		h.copyObj(o, x, xids)
	default:
		h.joinObj(o, x, xids)
		o.owner = 0
		return
	}
	o.owner, o.ownerStep = i+1, h.now
}

// blockCopied gives block b of ids, some of whose leaves were just
// copied from src's, src's identity if all its leaves now have src's,
// else a new one.
func (h *HB) blockCopied(ids, src []uint64, b int) {
	at := b * idBlock
	if slices.Equal(ids[at+1:at+idBlock], src[at+1:at+idBlock]) {
		ids[at] = src[at]
	} else {
		h.lastID++
		ids[at] = h.lastID
	}
}

// copyObj makes o's release clock x, whose identities are xids: of a
// clock at most x (one that x has learned, or none), only the blocks and
// the leaves whose identities differ from x's.
func (h *HB) copyObj(o *syncObj, x VC, xids []uint64) {
	if !leafIDs || len(o.vc) > len(x) {
		o.vc = append(o.vc[:0], x...)
		o.ids = append(o.ids[:0], xids...)
		return
	}
	o.vc.grow(len(x))
	o.ids = growBlocks(o.ids, len(x))
	nl := (len(x) + clockMask) >> clockBits
	for b := 0; b<<clockBits < nl; b++ {
		if o.ids[b*idBlock] == xids[b*idBlock] {
			continue
		}
		o.ids[b*idBlock] = xids[b*idBlock]
		for l := b << clockBits; l < min((b+1)<<clockBits, nl); l++ {
			if li := leafID(l); o.ids[li] != xids[li] {
				lo := l << clockBits
				copy(o.vc[lo:min(lo+clockFan, len(x))], x[lo:min(lo+clockFan, len(x))])
				o.ids[li] = xids[li]
			}
		}
	}
}

// joinObj joins x, whose identities are xids, into o's release clock.
func (h *HB) joinObj(o *syncObj, x VC, xids []uint64) {
	o.vc.grow(len(x))
	o.ids = growBlocks(o.ids, len(o.vc))
	h.joinLeaves(o.vc, o.ids, x, xids, nil)
}

// joinLeaves joins src into dst, as long as src at least, block by block
// and leaf by leaf: a block or a leaf whose identity in sids is dst's, in
// dids, holds the same components, and is passed over. sids nil says
// src's identities are not known: every leaf is compared. A leaf of dst
// that the join changes gets a new identity, or src's if it now equals
// src's leaf, and, if vers is not nil, the step now there; its block
// gets src's identity if all its leaves now have src's, else a new one.
func (h *HB) joinLeaves(dst VC, dids []uint64, src VC, sids []uint64, vers []uint64) {
	if !leafIDs {
		// Every component compared, as TestHBLeafIDs's reference.
		for k, y := range src {
			if y > dst[k] {
				dst[k] = y
				if vers != nil {
					setStep(vers, k>>clockBits, h.now)
				}
			}
		}
		return
	}
	nl := (len(src) + clockMask) >> clockBits
	for b := 0; b<<clockBits < nl; b++ {
		at := b * idBlock
		if sids != nil && sids[at] == dids[at] {
			continue
		}
		renamed := false // a leaf's identity changed
		for l := b << clockBits; l < min((b+1)<<clockBits, nl); l++ {
			li := leafID(l)
			if sids != nil && sids[li] == dids[li] {
				continue
			}
			lo := l << clockBits
			hi := min(lo+clockFan, len(src))
			d, s := dst[lo:hi], src[lo:hi]
			changed, equal := false, true
			for k, y := range s {
				switch {
				case y > d[k]:
					d[k], changed = y, true
				case y < d[k]:
					equal = false
				}
			}
			// Past src's end its leaf is zero.
			for _, y := range dst[hi:min(lo+clockFan, len(dst))] {
				if y != 0 {
					equal = false
				}
			}
			switch {
			case sids != nil && equal:
				dids[li], renamed = sids[li], true
			case changed:
				h.lastID++
				dids[li], renamed = h.lastID, true
			}
			if changed && vers != nil {
				setStep(vers, l, h.now)
			}
		}
		switch {
		case !renamed:
		case sids != nil && slices.Equal(dids[at+1:at+idBlock], sids[at+1:at+idBlock]):
			dids[at] = sids[at]
		default:
			h.lastID++
			dids[at] = h.lastID
		}
	}
}

// learn joins vc, whose identities are ids (nil if not known), into
// goroutine i's clock, marking the leaves it changes as changed now.
func (h *HB) learn(i int, vc VC, ids []uint64) {
	a := &h.clocks[i]
	if len(vc) > len(*a) {
		a.grow(len(vc))
	}
	x := *a
	v := h.leaves(i, len(x))
	h.ids[i] = growBlocks(h.ids[i], len(x))
	h.joinLeaves(x, h.ids[i], vc, ids, v)
}

// mark marks the leaf of component k of goroutine i's clock as changed
// now, with a new identity, and its block with a new one.
func (h *HB) mark(i, k int) {
	l := k >> clockBits
	setStep(h.leaves(i, k+1), l, h.now)
	ids := growBlocks(h.ids[i], k+1)
	h.ids[i] = ids
	ids[leafID(l)] = h.lastID + 1
	ids[blockID(l)] = h.lastID + 2
	h.lastID += 2
}

// leaves returns the steps of goroutine i's leaves, as many as n
// components have, in blocks (HB.vers).
func (h *HB) leaves(i, n int) []uint64 {
	h.vers[i] = growBlocks(h.vers[i], n)
	return h.vers[i]
}

// Now returns the step of the event last passed to Step: every change
// of a clock since comes at a later step.
func (h *HB) Now() uint64 { return h.now }

// Leaves returns the steps at which the leaves of goroutine i's clock
// last changed (clockFan components each), in blocks of clockFan leaves
// led by the block's last step (idBlock, leafID): a snapshot of the clock
// taken at step s differs from it only in the leaves changed after s.
// Owned by HB, valid until the next Step.
func (h *HB) Leaves(i int) []uint64 { return h.vers[i] }

// copyClock returns a copy of goroutine i's clock and its leaves'
// identities, reusing a recycled pair of arrays when one is free, so
// that channel traffic does not allocate per message in steady state.
func (h *HB) copyClock(i int) idClock {
	var c idClock
	if n := len(h.free); n > 0 {
		c = h.free[n-1]
		h.free = h.free[:n-1]
	}
	return idClock{append(c.vc[:0], h.clocks[i]...), append(c.ids[:0], h.idsOf(i)...)}
}

// idsOf returns the identities of goroutine i's leaves, as many as its
// clock has.
func (h *HB) idsOf(i int) []uint64 {
	h.ids[i] = growBlocks(h.ids[i], len(h.clocks[i]))
	return h.ids[i]
}

// goIndex assigns dense indices to goroutine ids. A small direct-mapped
// cache sits in front of the map because the goroutine changes on most
// events of an interleaved trace.
type goIndex struct {
	m     map[trace.GoID]int
	cache [64]struct {
		g trace.GoID
		i int32 // index + 1; 0 marks an empty slot
	}
}

func (x *goIndex) get(g trace.GoID) (int, bool) {
	c := &x.cache[uint32(g)%uint32(len(x.cache))]
	if c.i != 0 && c.g == g {
		return int(c.i - 1), true
	}
	i, ok := x.m[g]
	if ok {
		c.g, c.i = g, int32(i+1)
	}
	return i, ok
}

func (x *goIndex) add(g trace.GoID, i int) {
	if x.m == nil {
		x.m = make(map[trace.GoID]int)
	}
	x.m[g] = i
}

// HappensBefore reports whether the event with epoch a happens before an
// event whose clock is vcb. It is Epoch.Before, named for readers of the
// predictors.
func HappensBefore(a Epoch, vcb VC) bool { return a.Before(vcb) }
