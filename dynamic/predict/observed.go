package predict

import (
	"errors"
	"io"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/intent"
)

// This file answers observed mode's question: is the recorded run itself
// conflict-serializable with respect to its regions? A transaction is the
// outermost instance of a region of one goroutine (see txTracker for how
// traces mark them); an event outside every region is a transaction of its
// own.
// The run is serializable iff the graph of transactions, with an edge for
// program order, for each synchronisation edge (hb.go with lock edges) and
// for each pair of conflicting accesses in trace order, has no cycle
// (Velodrome's definition; SerializableByGraph checks it literally).
//
// Observed is a single pass with vector clocks in the style of AeroDrome
// (Mathur and Viswanathan, "Atomicity Checking in Linear Time using Vector
// Clocks", ASPLOS 2020). The clock of a goroutine, or of an object (a
// variable's last write, each goroutine's last read, each goroutine's
// last release of a lock, ...), says which transactions it knows of.
// When goroutine t, inside a transaction, acquires a clock K that knows
// of that transaction, then K depends on it, and it now depends on K: a
// cycle. When a transaction ends, everything that learned of its
// beginning learns all of it (a transaction is one node of the graph),
// and the check is repeated for the goroutines that receive it.
//
// Clocks are indexed by slots, not goroutines. A clock's knowledge of a
// transaction matters only while that transaction is open: every check
// asks whether a clock knows of the current transaction of the goroutine
// that acquires it (or ends, or stores it), and the end of a transaction
// hands its knowledge on to everything that knew of it. So a transaction
// takes a slot as it begins and frees it as it ends, and its component
// is a generation, a count of the transactions begun, in which the later
// transaction wins a join; a component means something only while it
// equals its slot's current generation. A clock is as wide as the most
// transactions ever open at once, not as the goroutines of the run (a
// test that starts thousands of short-lived goroutines made clocks of
// thousands of components, and goroutines times objects of them), and
// a clock that knows of no open transaction never will again, so the
// objects forget such clocks: each keeps as many as know of an open
// transaction.
//
// Refinements:
//   - Clocks are kept per publishing goroutine, so a goroutine never
//     "depends on itself" through its own earlier publication.
//   - The end-of-transaction update visits only the goroutines that
//     learned of the transaction (each slot lists them) and only the
//     clocks of objects stored, while the transaction ran, knowing of
//     it: each goroutine keeps the list of them for its open
//     transaction, added to whenever a clock is stored. (Visiting every
//     object updated since the transaction began instead costs, with many
//     goroutines interleaving long transactions, the goroutines squared
//     per object per transaction: 45K events per second at 64
//     goroutines.)
//   - A goroutine publishing the clock it last published there stores
//     nothing, and the look for a cycle reads the clocks of an object
//     only if the object is on the list of the acquiring goroutine's
//     open transaction (no other clock can know of it).
//
// An event costs time proportional to the slots, and a transaction's end
// also the goroutines and clocks that learned of it; only channel
// messages allocate (a copy of the sender's clock). An event outside a
// region is a one-event transaction: it learns before it publishes, so it
// can close no cycle by itself; it needs no slot and no end update.
//
// Atomic operations are synchronisation (release/acquire, as in hb.go), not
// conflicting accesses. Memory grows with goroutines, objects, the
// transactions open at once and channel messages in flight, not with the
// trace's length.

// txTracker follows one goroutine's transactions. A transaction is the
// outermost instance of a region. Traces mark regions in two ways, both
// honoured: RegionBegin and RegionEnd events (nested; the outermost pair
// delimits the transaction), and the Region and Inst fields of the events
// inside (the region instance an event belongs to; a change of instance,
// or an event outside every region, ends the transaction). Where the two
// disagree, the fields decide: a recorded trace gives an event to its
// outermost region with evidence of intent, which may be nested inside a
// region proximity proposed without evidence.
type txTracker struct {
	depth  int
	open   bool
	region trace.RegionID
	inst   uint64 // instValue: the part of the instance since the last wait
	waits  uint64 // the goroutine's waits so far (endsInstance)
}

// step classifies e, the goroutine's next event: ended says the open
// transaction ended with the goroutine's previous event; begun says a
// transaction begins at e; in says e belongs to a transaction; last says
// e is its last event.
func (t *txTracker) step(e *trace.Event) (ended, begun, in, last bool) {
	if endsInstance(e.Kind) {
		t.waits++ // a region holds no wait: what follows is another part
	}
	inst := instValue(e.Inst, t.waits)
	same := t.open && e.Region != 0 && e.Region == t.region && inst == t.inst
	switch e.Kind {
	case trace.KindRegionBegin:
		t.depth++
		if t.depth == 1 && !same {
			ended = t.open
			begun, t.open, t.region, t.inst = true, true, e.Region, inst
		}
		return ended, begun, true, false
	case trace.KindRegionEnd:
		if t.depth > 0 {
			t.depth--
		}
		if same {
			// The end of the transaction's own region instance.
			t.open = false
			return false, false, true, true
		}
		return false, false, t.open, false
	}
	switch {
	case same:
		return false, false, true, false
	case e.Region != 0:
		// The event says which region instance it belongs to, and that
		// decides, whatever begun around it: the recorder gives an event
		// to its outermost region with evidence of intent, which may be
		// nested in a proposal without any.
		ended = t.open
		t.open, t.region, t.inst = true, e.Region, inst
		return ended, true, true, false
	case t.depth > 0 && t.open:
		// Inside a begin and end whose events carry no region.
		return false, false, true, false
	}
	ended, t.open = t.open, false
	return ended, false, false, false
}

// proposals is the regions whose begin events say that nothing shows
// they are meant to be atomic (intent.None, the recorder's proposals):
// their instances are not transactions. It learns them as the trace
// streams, each begin event coming before the events of its instance.
type proposals map[trace.RegionID]bool

// stepTx steps t over e as the transaction trackers see it: a begin or
// end of a proposal is nothing, and an event of a proposal's instance is
// outside every region.
func (p *proposals) stepTx(t *txTracker, e *trace.Event) (ended, begun, in, last bool) {
	switch {
	case e.Kind == trace.KindRegionBegin:
		if ev, _, _ := e.Intent(); ev == intent.None {
			if *p == nil {
				*p = make(proposals)
			}
			(*p)[e.Region] = true
			return false, false, t.open, false
		}
	case len(*p) == 0 || !(*p)[e.Region]:
	case e.Kind == trace.KindRegionEnd:
		return false, false, t.open, false
	default:
		v := *e
		v.Region, v.Inst = 0, 0
		return t.step(&v)
	}
	return t.step(e)
}

// ObservedOptions configures Observed.
type ObservedOptions struct {
	// Object describes object ids (channel capacities, variable names);
	// typically trace.Reader.Object.
	Object func(trace.ObjID) trace.Object
}

// Observed checks the conflict-serializability of a run in one pass.
type Observed struct {
	opts  ObservedOptions
	props proposals
	gIdx  map[trace.GoID]int
	th    []obsThread
	lastG trace.GoID
	lastI int

	objs    map[trace.ObjID]*obsObj // objects with ids from denseObjs up
	dense   []*obsObj               // objects with small ids, by id
	lastObj trace.ObjID
	lastO   *obsObj
	// recent holds objects with ids from denseObjs up, each in the slot
	// its id gives: a trace whose objects are numbered from 2^32 (STD
	// traces that tracegen writes) looks most up here, not in objs.
	recent [1024]*obsObj
	moved  []obsSlot

	// The slots: each open transaction holds one, an index of the
	// clocks, while it runs (see slots below).
	gen     uint64    // the generation of the last transaction begun
	cur     []uint64  // per slot: the generation of its transaction, 0 if free
	owner   []int32   // per slot: the goroutine of its transaction
	knowers [][]int32 // per slot: the goroutines, other than its owner, whose clock knows its transaction
	free    []int32   // the free slots

	found   bool
	finding Finding
}

type obsThread struct {
	id      trace.GoID
	c       gclock
	tx      txTracker
	lastSeq uint64 // the goroutine's previous event
	// slot and begin are the slot and generation of the open
	// transaction (active); c[slot] is begin while it runs.
	slot  int32
	begin uint64
	// learned lists the clocks of objects stored, while the open
	// transaction ran, knowing of it: what its end must extend.
	learned  []obsSlot
	beginSeq uint64
	begin1   trace.Event // the transaction's first event, for findings
	last     trace.Event // the goroutine's previous event
	active   bool
	// ver counts the changes of c (from 1), so that a goroutine that
	// publishes the clock it last published somewhere stores nothing.
	ver uint64
}

// gclock is a clock of observed mode: component s is the generation of
// the last transaction that held slot s that the clock knows of. Only a
// component equal to its slot's current generation means anything (the
// clock knows of that open transaction); generations grow, so the
// pointwise maximum of two clocks keeps what either knows.
type gclock []uint64

// Get returns component s, zero past the end.
func (a gclock) Get(s int32) uint64 {
	if int(s) < len(a) {
		return a[s]
	}
	return 0
}

// leq reports whether a is pointwise at most b.
func (a gclock) leq(b gclock) bool {
	for i, x := range a {
		if x != 0 && (i >= len(b) || x > b[i]) {
			return false
		}
	}
	return true
}

// join sets *a to the pointwise maximum of *a and b.
func (a *gclock) join(b gclock) {
	a.grow(len(b))
	x := *a
	for i, v := range b {
		x[i] = max(x[i], v)
	}
}

// grow extends *a with zeros to length n.
func (a *gclock) grow(n int) {
	if n > len(*a) {
		*a = append(*a, make(gclock, n-len(*a))...)
	}
}

// clone returns a copy of a that the caller owns.
func (a gclock) clone() gclock { return append(gclock(nil), a...) }

// live reports whether clock c knows of a transaction still open. A
// clock that does not never will: it learns more only from the end of
// a transaction it knows of (extend), and whoever joins it learns
// nothing that matters, so it is forgotten.
func (o *Observed) live(c gclock) bool {
	for s, v := range c {
		if v != 0 && v == o.cur[s] {
			return true
		}
	}
	return false
}

// open gives goroutine t's transaction, beginning now, a slot and the
// next generation.
func (o *Observed) open(t int) {
	var s int32
	if n := len(o.free); n > 0 {
		s = o.free[n-1]
		o.free = o.free[:n-1]
	} else {
		s = int32(len(o.cur))
		o.cur = append(o.cur, 0)
		o.owner = append(o.owner, 0)
		o.knowers = append(o.knowers, nil)
	}
	o.gen++
	o.cur[s], o.owner[s] = o.gen, int32(t)
	th := &o.th[t]
	th.slot, th.begin, th.active = s, o.gen, true
	th.c.grow(int(s) + 1)
	th.c[s] = o.gen
	th.ver++
}

// release frees goroutine t's slot once its transaction's end has been
// propagated: the clocks' components for it now name an ended
// transaction.
func (o *Observed) release(t int) {
	s := o.th[t].slot
	o.cur[s] = 0
	clear(o.knowers[s])
	o.knowers[s] = o.knowers[s][:0]
	o.free = append(o.free, s)
}

// learn joins k into goroutine u's clock, noting a change of version and
// each open transaction u learns of.
func (o *Observed) learn(u int, k gclock) {
	th := &o.th[u]
	th.c.grow(len(k))
	x := th.c[:len(k)]
	changed := false
	for s, v := range k {
		if v <= x[s] {
			continue
		}
		x[s], changed = v, true
		if v == o.cur[s] && int(o.owner[s]) != u {
			o.knowers[s] = append(o.knowers[s], int32(u))
		}
	}
	if changed {
		th.ver++
	}
}

// pubClock is a clock published by one goroutine, with the event that
// published it.
type pubClock struct {
	vc gclock
	// ver is the version of goroutine g's clock that vc is a copy of,
	// or 0 if vc is not one (it was extended by a transaction's end).
	ver  uint64
	seq  uint64
	site trace.SiteID
	op   trace.Kind
	g    int32
	set  bool
	last lastLearn
}

// lastLearn is the goroutine and transaction (its generation) whose list
// of clocks a clock (or a channel's clocks) was last added to, so that it
// is not added again and again. Its zero value names none: generations
// begin at 1.
type lastLearn struct {
	g int32
	b uint64
}

// slotKind says which clock, or clocks, of an object a slot names.
type slotKind uint8

const (
	slotW    slotKind = iota // the last write
	slotR                    // goroutine g's last read
	slotPub                  // goroutine g's last release
	slotRPub                 // goroutine g's last RUnlock
	slotChan                 // the channel's clocks: its close and messages in flight
)

// obsSlot names a clock of an object (or a channel's clocks) by its
// object, kind, publishing goroutine and place in the object's list.
type obsSlot struct {
	x    *obsObj
	kind slotKind
	g    int32
	i    int32
}

// clock returns the clock s names, nil if it has been forgotten since;
// s is not a slotChan.
func (s obsSlot) clock() *pubClock {
	var ps pubs
	switch s.kind {
	case slotR:
		ps = s.x.r
	case slotPub:
		ps = s.x.pub
	case slotRPub:
		ps = s.x.rpub
	default:
		return &s.x.w
	}
	if p := &ps[s.i]; p.set && p.g == s.g {
		return p
	}
	return nil
}

// lastLearn returns where the slot's last list is kept, nil if its clock
// has been forgotten.
func (s obsSlot) lastLearn() *lastLearn {
	if s.kind == slotChan {
		return &s.x.ch.last
	}
	if p := s.clock(); p != nil {
		return &p.last
	}
	return nil
}

// pubs is an object's clocks published one per goroutine (each
// goroutine's last read, or release, ...), in no order: only the clocks
// that know of an open transaction, the others forgotten (Observed.live).
// They are few whatever the number of goroutines the run has had. A
// forgotten clock's place is free (not set) until add reuses it, so that
// a clock keeps its place while it is kept.
type pubs []pubClock

// index returns the index of goroutine g's clock in ps, -1 if none.
func (ps pubs) index(g int32) int {
	for i := range ps {
		if ps[i].set && ps[i].g == g {
			return i
		}
	}
	return -1
}

// drop forgets ps's clock i; its memory stays, for add to reuse.
func (ps pubs) drop(i int) {
	ps[i] = pubClock{vc: ps[i].vc[:0]}
}

// add returns the index of a free place in ps, adding one if none is.
func (ps *pubs) add() int {
	for i := range *ps {
		if !(*ps)[i].set {
			return i
		}
	}
	*ps = append(*ps, pubClock{})
	return len(*ps) - 1
}

// from records the publishing event e of goroutine t in p.
func (p *pubClock) from(t int, ver uint64, e *trace.Event) {
	p.ver = ver
	p.seq, p.site, p.op, p.g, p.set = e.Seq, e.Site, e.Kind, int32(t), true
}

// obsObj is the state of one object. Which fields are used depends on its
// kind: w, wThr and r for a variable; pub (and rpub for a RWMutex's read
// releases) for a lock, WaitGroup, Cond, Once or atomic; ch for a channel.
type obsObj struct {
	id   trace.ObjID
	w    pubClock
	wThr int
	r    pubs // per goroutine: its last read
	pub  pubs // per goroutine: its last release (Unlock, Done, Signal, Store...)
	rpub pubs // per goroutine: its last RUnlock
	ch   *obsChan

	// learnB[s] is the last transaction of slot s (its generation) that
	// a clock stored in x knew of. No clock of x knows of an open
	// transaction unless learnB of its slot is its generation, which
	// spares reading them all to look for a cycle.
	learnB []uint64
}

type obsChan struct {
	capKnown bool
	cap      uint64
	sends    map[uint64]obsMsg
	recvs    map[uint64]obsMsg
	waiting  map[uint64]int // receive k -> goroutine whose send k+cap came first
	closed   pubClock
	closer   int
	last     lastLearn
}

// obsMsg is a clock in flight on a channel and the goroutine that sent it.
type obsMsg struct {
	pubClock
	g int
}

// NewObserved returns an Observed ready for the trace's first event.
func NewObserved(opts ObservedOptions) *Observed {
	return &Observed{
		opts:  opts,
		gIdx:  make(map[trace.GoID]int),
		objs:  make(map[trace.ObjID]*obsObj),
		lastI: -1,
	}
}

// CheckObserved runs observed mode over a whole stream. It returns the
// first cycle found as a finding, or nil if the run is serializable.
func CheckObserved(r trace.Reader) (*Finding, error) {
	o := NewObserved(ObservedOptions{Object: r.Object})
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return o.Finish(), nil
		}
		if err != nil {
			return nil, err
		}
		o.Step(&e)
	}
}

// CheckObservedTrace runs observed mode over a trace in memory.
func CheckObservedTrace(t *trace.Trace) *Finding {
	o := NewObserved(ObservedOptions{Object: t.Object})
	for i := range t.Events {
		o.Step(&t.Events[i])
	}
	return o.Finish()
}

func (o *Observed) thread(g trace.GoID) int {
	if o.lastI >= 0 && g == o.lastG {
		return o.lastI
	}
	i, ok := o.gIdx[g]
	if !ok {
		i = len(o.th)
		o.gIdx[g] = i
		o.th = append(o.th, obsThread{id: g, ver: 1})
	}
	o.lastG, o.lastI = g, i
	return i
}

// denseObjs bounds the ids of the objects Observed keeps in a slice: at
// most 8 MB of pointers.
const denseObjs = 1 << 20

func (o *Observed) obj(id trace.ObjID) *obsObj {
	if o.lastO != nil && o.lastObj == id {
		return o.lastO
	}
	var x *obsObj
	if id < denseObjs {
		// Text and STD traces number their objects from 0: a slice
		// spares hashing every access's object.
		if int(id) >= len(o.dense) {
			o.dense = append(o.dense, make([]*obsObj, int(id)+1-len(o.dense))...)
		}
		if x = o.dense[id]; x == nil {
			x = &obsObj{id: id, wThr: -1}
			o.dense[id] = x
		}
	} else if r := &o.recent[id%trace.ObjID(len(o.recent))]; *r != nil && (*r).id == id {
		x = *r
	} else {
		if x = o.objs[id]; x == nil {
			x = &obsObj{id: id, wThr: -1}
			o.objs[id] = x
		}
		*r = x
	}
	o.lastObj, o.lastO = id, x
	return x
}

// touch notes that slot s now holds clock c: each open transaction that
// c knows of adds s to the clocks its end must extend.
func (o *Observed) touch(s obsSlot, c gclock) {
	x, last := s.x, s.lastLearn()
	for sl, b := range c {
		if b == 0 || b != o.cur[sl] {
			continue
		}
		u := o.owner[sl]
		uth := &o.th[u]
		if !uth.active {
			continue // its end is being propagated
		}
		if len(x.learnB) <= sl {
			x.learnB = append(x.learnB, make([]uint64, len(o.cur)-len(x.learnB))...)
		}
		x.learnB[sl] = b
		if last == nil || *last == (lastLearn{u, b}) {
			continue
		}
		*last = lastLearn{u, b}
		uth.learned = append(uth.learned, s)
	}
}

// learned reports whether a clock stored in x knew of the transaction of
// slot sl and generation b.
func (x *obsObj) learned(sl int32, b uint64) bool {
	return int(sl) < len(x.learnB) && x.learnB[sl] == b
}

// Found reports whether a cycle has been found.
func (o *Observed) Found() bool { return o.found }

// Finish ends the transactions still open (a run that stops inside a
// region) and returns the first cycle found, or nil.
func (o *Observed) Finish() *Finding {
	for t := range o.th {
		if o.th[t].active {
			o.th[t].tx = txTracker{}
			o.end(t)
		}
	}
	if !o.found {
		return nil
	}
	f := o.finding
	return &f
}

// Step applies one event.
func (o *Observed) Step(e *trace.Event) {
	t := o.thread(e.G)
	th := &o.th[t]
	ended, begun, _, last := o.props.stepTx(&th.tx, e)
	if ended {
		o.end(t)
	}
	th.lastSeq = e.Seq
	th.last = *e
	switch {
	case begun:
		o.open(t)
		th.beginSeq = e.Seq
		clear(th.learned)
		th.learned = th.learned[:0]
		th.begin1 = *e
	}
	// An event outside every region is a transaction of its own, which
	// needs no slot: it learns before it publishes, so no cycle closes
	// through it that does not close through the transactions around it.
	o.apply(t, e)
	if last {
		o.end(t)
	}
}

// apply makes goroutine t learn and publish what event e synchronises.
func (o *Observed) apply(t int, e *trace.Event) {
	switch e.Kind {
	case trace.KindRead:
		x := o.obj(e.Obj)
		if x.wThr != t && x.w.set {
			o.acquire(t, &x.w, e)
		}
		o.publish(t, x, slotR, &x.r, e)
	case trace.KindWrite:
		x := o.obj(e.Obj)
		if x.wThr != t && x.w.set {
			o.acquire(t, &x.w, e)
		}
		o.acquireAll(t, x, &x.r, e)
		x.w.vc = append(x.w.vc[:0], o.th[t].c...)
		x.w.from(t, o.th[t].ver, e)
		x.wThr = t
		o.touch(obsSlot{x: x, kind: slotW}, o.th[t].c)
	case trace.KindAcquire:
		x := o.obj(e.Obj)
		o.acquireAll(t, x, &x.pub, e)
		o.acquireAll(t, x, &x.rpub, e)
	case trace.KindRAcquire:
		x := o.obj(e.Obj)
		o.acquireAll(t, x, &x.pub, e)
	case trace.KindRelease, trace.KindCondSignal, trace.KindCondBroadcast, trace.KindWGDone, trace.KindAtomicStore:
		x := o.obj(e.Obj)
		o.publish(t, x, slotPub, &x.pub, e)
	case trace.KindRRelease:
		x := o.obj(e.Obj)
		o.publish(t, x, slotRPub, &x.rpub, e)
	case trace.KindWGAdd:
		if int64(e.Arg) < 0 {
			x := o.obj(e.Obj)
			o.publish(t, x, slotPub, &x.pub, e)
		}
	case trace.KindWGWait, trace.KindCondWait, trace.KindAtomicLoad:
		x := o.obj(e.Obj)
		o.acquireAll(t, x, &x.pub, e)
	case trace.KindAtomicRMW:
		x := o.obj(e.Obj)
		o.acquireAll(t, x, &x.pub, e)
		o.publish(t, x, slotPub, &x.pub, e)
	case trace.KindOnceDo:
		x := o.obj(e.Obj)
		if e.Arg == 1 {
			o.publish(t, x, slotPub, &x.pub, e)
		} else {
			o.acquireAll(t, x, &x.pub, e)
		}
	case trace.KindFork:
		c := o.thread(trace.GoID(e.Arg))
		o.lastG, o.lastI = e.G, t
		o.learn(c, o.th[t].c)
	case trace.KindSend:
		o.send(t, e)
	case trace.KindRecv:
		o.recv(t, e)
	case trace.KindClose:
		x := o.obj(e.Obj)
		ch := o.chanOf(x)
		ch.closed.vc = append(ch.closed.vc[:0], o.th[t].c...)
		ch.closed.from(t, o.th[t].ver, e)
		ch.closer = t
		o.touch(obsSlot{x: x, kind: slotChan}, o.th[t].c)
	}
}

// acquire makes goroutine t learn clock k (published by event k.seq of
// another goroutine) at event e, first checking whether k already depends
// on t's current transaction.
func (o *Observed) acquire(t int, k *pubClock, e *trace.Event) {
	o.acquireChecked(t, k, e, true)
}

// acquireChecked is acquire, with the check for a cycle only if check
// says k may know of t's transaction.
func (o *Observed) acquireChecked(t int, k *pubClock, e *trace.Event, check bool) {
	th := &o.th[t]
	if check && th.active && !o.found && k.vc.Get(th.slot) >= th.begin {
		o.report(t, o.access(e, "closing"), Access{Seq: k.seq, G: o.th[k.g].id, Op: k.op, Obj: e.Obj, Site: k.site, Role: "source"})
	}
	o.learn(t, k.vc)
}

// acquireAll acquires every other goroutine's publication in ps, clocks
// of x, and forgets those that know of no open transaction.
func (o *Observed) acquireAll(t int, x *obsObj, ps *pubs, e *trace.Event) {
	th := &o.th[t]
	check := th.active && x.learned(th.slot, th.begin)
	for i := range *ps {
		p := &(*ps)[i]
		switch {
		case !p.set:
		case !o.live(p.vc):
			ps.drop(i)
		case int(p.g) != t:
			o.acquireChecked(t, p, e, check)
		}
	}
}

// publish records goroutine t's clock as its publication in *ps, or
// forgets t's publication there if its clock knows of no open
// transaction.
func (o *Observed) publish(t int, x *obsObj, kind slotKind, ps *pubs, e *trace.Event) {
	th := &o.th[t]
	i := ps.index(int32(t))
	if i >= 0 && (*ps)[i].ver == th.ver {
		// The same clock as before: x has learned all it knows.
		(*ps)[i].from(t, th.ver, e)
		return
	}
	if !o.live(th.c) {
		if i >= 0 {
			ps.drop(i)
		}
		return
	}
	if i < 0 {
		i = ps.add()
	}
	p := &(*ps)[i]
	p.vc = append(p.vc[:0], th.c...)
	p.from(t, th.ver, e)
	o.touch(obsSlot{x, kind, int32(t), int32(i)}, th.c)
}

func (o *Observed) chanOf(x *obsObj) *obsChan {
	if x.ch == nil {
		ch := &obsChan{
			sends:   make(map[uint64]obsMsg),
			recvs:   make(map[uint64]obsMsg),
			waiting: make(map[uint64]int),
			closer:  -1,
		}
		if o.opts.Object != nil {
			if ob := o.opts.Object(x.id); ob.Kind == trace.ObjChan && ob.Cap >= 0 {
				ch.capKnown, ch.cap = true, uint64(ob.Cap)
			}
		}
		x.ch = ch
	}
	return x.ch
}

// send and recv mirror HB.send and HB.recv, with checks.
func (o *Observed) send(t int, e *trace.Event) {
	x := o.obj(e.Obj)
	ch := o.chanOf(x)
	k := e.Arg
	if ch.capKnown && k > ch.cap {
		r := k - ch.cap
		if m, ok := ch.recvs[r]; ok {
			if m.g != t {
				o.acquire(t, &m.pubClock, e)
			}
			delete(ch.recvs, r)
		} else {
			ch.waiting[r] = t
		}
	}
	m := obsMsg{pubClock{vc: o.th[t].c.clone()}, t}
	m.from(t, o.th[t].ver, e)
	ch.sends[k] = m
	o.touch(obsSlot{x: x, kind: slotChan}, o.th[t].c)
}

func (o *Observed) recv(t int, e *trace.Event) {
	x := o.obj(e.Obj)
	ch := o.chanOf(x)
	k := e.Arg
	if k == 0 {
		if ch.closed.set && ch.closer != t {
			o.acquire(t, &ch.closed, e)
		}
		return
	}
	if m, ok := ch.sends[k]; ok {
		if m.g != t {
			o.acquire(t, &m.pubClock, e)
		}
		delete(ch.sends, k)
	}
	if !ch.capKnown {
		return
	}
	if s, ok := ch.waiting[k]; ok {
		// The send k+cap completes now: its goroutine learns this
		// receive, inside the transaction it is in.
		delete(ch.waiting, k)
		if s != t {
			pc := pubClock{vc: o.th[t].c}
			pc.from(t, o.th[t].ver, e)
			o.acquire(s, &pc, e)
		}
		return
	}
	m := obsMsg{pubClock{vc: o.th[t].c.clone()}, t}
	m.from(t, o.th[t].ver, e)
	ch.recvs[k] = m
	o.touch(obsSlot{x: x, kind: slotChan}, o.th[t].c)
}

// end closes goroutine t's transaction: every goroutine and object clock
// that learned of its beginning learns all of it, and a goroutine that
// thereby learns of its own current transaction closes a cycle. Then
// its slot is free.
func (o *Observed) end(t int) {
	th := &o.th[t]
	if !th.active {
		return
	}
	th.active = false
	sl, b, c := th.slot, th.begin, th.c
	// learn adds only to the lists of the transactions u learns of,
	// which u did not know of: never to this one's.
	for _, u := range o.knowers[sl] {
		uth := &o.th[u]
		if uth.active && !o.found && c.Get(uth.slot) >= uth.begin {
			// u's transaction reached t's, which had learned of u's:
			// the cycle closes as t's transaction ends.
			o.report(int(u), o.access(&th.last, "closing"), o.access(&th.begin1, "source"))
		}
		o.learn(int(u), c)
	}
	// The clocks that learned of the transaction while it ran; those
	// that learn more now hold c, which may know of other open
	// transactions.
	moved := o.moved[:0]
	for _, s := range th.learned {
		if o.extend(s, sl, b, c) {
			moved = append(moved, s)
		}
	}
	clear(th.learned)
	th.learned = th.learned[:0]
	for _, s := range moved {
		o.touch(s, c)
	}
	clear(moved)
	o.moved = moved[:0]
	o.release(t)
}

// extend joins c into every clock of slot s that knows of the
// transaction of slot sl and generation b, and reports whether any
// changed.
func (o *Observed) extend(s obsSlot, sl int32, b uint64, c gclock) bool {
	changed := false
	ext := func(p *pubClock) {
		if p != nil && p.set && p.vc.Get(sl) >= b && !c.leq(p.vc) {
			p.vc.join(c)
			p.ver = 0
			changed = true
		}
	}
	if s.kind != slotChan {
		ext(s.clock())
		return changed
	}
	if ch := s.x.ch; ch != nil {
		ext(&ch.closed)
		for k, m := range ch.sends {
			ext(&m.pubClock)
			ch.sends[k] = m
		}
		for k, m := range ch.recvs {
			ext(&m.pubClock)
			ch.recvs[k] = m
		}
	}
	return changed
}

// access describes event e as a finding's access.
func (o *Observed) access(e *trace.Event, role string) Access {
	return Access{Seq: e.Seq, G: e.G, Op: e.Kind, Obj: e.Obj, Site: e.Site, Role: role}
}

// report records the first cycle: goroutine t's current transaction (its
// first event), the event whose clock already knew of that transaction
// (source), and the event at which t learned it (closing).
func (o *Observed) report(t int, closing, source Access) {
	o.found = true
	th := &o.th[t]
	var name string
	if closing.Obj != 0 && o.opts.Object != nil {
		name = o.opts.Object(closing.Obj).Name
	}
	o.finding = Finding{
		Kind:     KindUnserializable,
		Pattern:  "cycle",
		Level:    LevelPredicted,
		Var:      name,
		Accesses: []Access{o.access(&th.begin1, "transaction"), source, closing},
		Count:    1,
	}
}

// SerializableByGraph decides observed mode's question by definition: it
// builds the graph of transactions of t, joined by program order, by the
// synchronisation edges of hb.go (with lock edges; every earlier release
// of an object to every later acquire) and by conflicting accesses in trace
// order, and looks for a cycle after each event (Velodrome's definition).
// It returns the index of the first event after which the graph of the
// prefix has a cycle, or -1 if the run is serializable. It takes time and
// memory quadratic in the trace; it is the reference Observed is tested
// against, for small traces.
func SerializableByGraph(t *trace.Trace) int {
	type gstate struct {
		tx      txTracker
		cur     int // open transaction's node, -1 if none
		last    int // node of the previous event, -1 if none
		pending []int
	}
	type src struct {
		node int
		g    trace.GoID
	}
	var out [][]int
	gs := map[trace.GoID]*gstate{}
	get := func(g trace.GoID) *gstate {
		s := gs[g]
		if s == nil {
			s = &gstate{cur: -1, last: -1}
			gs[g] = s
		}
		return s
	}
	reaches := func(from, to int) bool {
		seen := make([]bool, len(out))
		stack := []int{from}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n == to {
				return true
			}
			if seen[n] {
				continue
			}
			seen[n] = true
			stack = append(stack, out[n]...)
		}
		return false
	}
	cyclic := false
	edge := func(a, b int) {
		if a == b || a < 0 {
			return
		}
		for _, x := range out[a] {
			if x == b {
				return
			}
		}
		out[a] = append(out[a], b)
		if reaches(b, a) {
			cyclic = true
		}
	}
	newNode := func(s *gstate) int {
		n := len(out)
		out = append(out, nil)
		edge(s.last, n)
		for _, p := range s.pending {
			edge(p, n)
		}
		s.pending = nil
		return n
	}
	writes := map[trace.ObjID][]src{}
	reads := map[trace.ObjID][]src{}
	pubs := map[[2]uint64][]int{} // (object, class) -> publishing nodes
	const (
		clsRelease = iota
		clsRRelease
		clsSignal
	)
	sends := map[[2]uint64]int{}        // (chan, k) -> node
	sendG := map[[2]uint64]trace.GoID{} // (chan, k) -> sender
	recvs := map[[2]uint64]int{}        // (chan, k) -> node
	closes := map[trace.ObjID][]int{}
	caps := func(c trace.ObjID) (uint64, bool) {
		ob := t.Object(c)
		return uint64(max(ob.Cap, 0)), ob.Kind == trace.ObjChan && ob.Cap >= 0
	}
	var props proposals
	for i := range t.Events {
		e := &t.Events[i]
		s := get(e.G)
		ended, begun, in, last := props.stepTx(&s.tx, e)
		if ended {
			s.cur = -1
		}
		var n int
		switch {
		case begun:
			n = newNode(s)
			s.cur = n
		case in:
			n = s.cur
		default:
			n = newNode(s)
		}
		from := func(ns []int) {
			for _, a := range ns {
				edge(a, n)
			}
		}
		pubKey := func(cls int) [2]uint64 { return [2]uint64{uint64(e.Obj), uint64(cls)} }
		switch e.Kind {
		case trace.KindRead, trace.KindWrite:
			for _, w := range writes[e.Obj] {
				if w.g != e.G {
					edge(w.node, n)
				}
			}
			if e.Kind == trace.KindWrite {
				for _, r := range reads[e.Obj] {
					if r.g != e.G {
						edge(r.node, n)
					}
				}
				writes[e.Obj] = append(writes[e.Obj], src{n, e.G})
			} else {
				reads[e.Obj] = append(reads[e.Obj], src{n, e.G})
			}
		case trace.KindAcquire:
			from(pubs[pubKey(clsRelease)])
			from(pubs[pubKey(clsRRelease)])
		case trace.KindRAcquire:
			from(pubs[pubKey(clsRelease)])
		case trace.KindRelease:
			pubs[pubKey(clsRelease)] = append(pubs[pubKey(clsRelease)], n)
		case trace.KindRRelease:
			pubs[pubKey(clsRRelease)] = append(pubs[pubKey(clsRRelease)], n)
		case trace.KindWGDone, trace.KindCondSignal, trace.KindCondBroadcast, trace.KindAtomicStore:
			pubs[pubKey(clsSignal)] = append(pubs[pubKey(clsSignal)], n)
		case trace.KindWGAdd:
			if int64(e.Arg) < 0 {
				pubs[pubKey(clsSignal)] = append(pubs[pubKey(clsSignal)], n)
			}
		case trace.KindWGWait, trace.KindCondWait, trace.KindAtomicLoad:
			from(pubs[pubKey(clsSignal)])
		case trace.KindAtomicRMW:
			from(pubs[pubKey(clsSignal)])
			pubs[pubKey(clsSignal)] = append(pubs[pubKey(clsSignal)], n)
		case trace.KindOnceDo:
			if e.Arg == 1 {
				pubs[pubKey(clsSignal)] = append(pubs[pubKey(clsSignal)], n)
			} else {
				from(pubs[pubKey(clsSignal)])
			}
		case trace.KindFork:
			c := get(trace.GoID(e.Arg))
			c.pending = append(c.pending, n)
		case trace.KindSend:
			k := [2]uint64{uint64(e.Obj), e.Arg}
			sends[k], sendG[k] = n, e.G
			if c, ok := caps(e.Obj); ok && e.Arg > c {
				if r, ok := recvs[[2]uint64{uint64(e.Obj), e.Arg - c}]; ok {
					edge(r, n)
				}
			}
		case trace.KindRecv:
			if e.Arg == 0 {
				from(closes[e.Obj])
				break
			}
			k := [2]uint64{uint64(e.Obj), e.Arg}
			if a, ok := sends[k]; ok {
				edge(a, n)
			}
			recvs[k] = n
			if c, ok := caps(e.Obj); ok {
				sk := [2]uint64{uint64(e.Obj), e.Arg + c}
				if _, ok := sends[sk]; ok {
					// The send was recorded first: its goroutine's next
					// event, in its open transaction or a later one,
					// comes after this receive.
					if sg := get(sendG[sk]); sg.cur >= 0 {
						edge(n, sg.cur)
					} else {
						sg.pending = append(sg.pending, n)
					}
				}
			}
		case trace.KindClose:
			closes[e.Obj] = append(closes[e.Obj], n)
		}
		s.last = n
		if last {
			s.cur = -1
		}
		if cyclic {
			return i
		}
	}
	return -1
}
