package predict

import (
	"maps"
	"slices"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

func TestGClock(t *testing.T) {
	cases := []struct {
		a, b, want gclock
	}{
		{gclock{1, 2}, gclock{1, 2}, gclock{1, 2}},
		{gclock{1, 2}, gclock{0, 1}, gclock{1, 2}},
		{gclock{1, 2}, gclock{2, 1}, gclock{2, 2}},
		{gclock{1}, gclock{1, 0, 0}, gclock{1, 0, 0}},
		{gclock{1}, gclock{0, 0, 3}, gclock{1, 0, 3}},
		{nil, gclock{0, 4}, gclock{0, 4}},
		{gclock{5, 5}, nil, gclock{5, 5}},
	}
	for _, c := range cases {
		a := c.a.clone()
		a.join(c.b)
		if !slices.Equal(a, c.want) {
			t.Errorf("join(%v, %v) = %v, want %v", c.a, c.b, a, c.want)
		}
		if !c.a.leq(a) || !c.b.leq(a) {
			t.Errorf("%v or %v is not at most their join %v", c.a, c.b, a)
		}
		if got := a.leq(c.a); got != slices.Equal(c.a, c.want) && len(c.a) == len(c.want) {
			t.Errorf("leq(%v, %v) = %v", a, c.a, got)
		}
	}
	if (gclock{0, 3}).Get(1) != 3 || (gclock{0, 3}).Get(2) != 0 {
		t.Errorf("Get past the end is not 0")
	}
}

// TestObservedSlots checks that a transaction holds a slot while it runs,
// that an ended one's slot is reused with a later generation, and that
// a clock is live only while it knows of a transaction still open.
func TestObservedSlots(t *testing.T) {
	o := NewObserved(ObservedOptions{})
	a, b, c := o.thread(1), o.thread(2), o.thread(3)
	o.open(a)
	o.open(b)
	if o.th[a].slot != 0 || o.th[b].slot != 1 || o.th[a].begin != 1 || o.th[b].begin != 2 {
		t.Fatalf("slots %d %d, generations %d %d; want 0 1, 1 2", o.th[a].slot, o.th[b].slot, o.th[a].begin, o.th[b].begin)
	}
	// c learns of a's transaction, and is listed as knowing of it.
	o.learn(c, o.th[a].c)
	if !slices.Equal(o.knowers[0], []int32{int32(c)}) || len(o.knowers[1]) != 0 {
		t.Errorf("knowers %v, want [[%d] []]", o.knowers, c)
	}
	old := o.th[c].c.clone()
	if !o.live(old) {
		t.Errorf("a clock that knows of an open transaction is not live")
	}
	// a's end: c learns all of it (a's clock, which knows nothing more
	// here), and the slot is free; the clock that knew of it is no
	// longer live.
	o.end(a)
	if o.th[a].active || o.cur[0] != 0 || len(o.knowers[0]) != 0 || !slices.Equal(o.free, []int32{0}) {
		t.Errorf("after the end: active %v, cur %v, knowers %v, free %v", o.th[a].active, o.cur, o.knowers, o.free)
	}
	if o.live(old) {
		t.Errorf("a clock that knows only of an ended transaction is live")
	}
	// c's own transaction takes the free slot, at a later generation:
	// the old component does not say that a clock knows of it.
	o.open(c)
	if o.th[c].slot != 0 || o.th[c].begin != 3 || old.Get(0) >= o.th[c].begin {
		t.Errorf("c's transaction: slot %d, generation %d", o.th[c].slot, o.th[c].begin)
	}
	// Ending a goroutine that has no open transaction frees nothing.
	o.end(a)
	if len(o.free) != 0 {
		t.Errorf("free slots %v after ending no transaction", o.free)
	}
}

// TestObservedPubs checks that a published clock is kept only while it
// knows of an open transaction, and that acquiring forgets those that
// no longer do.
func TestObservedPubs(t *testing.T) {
	o := NewObserved(ObservedOptions{})
	a, b, c := o.thread(1), o.thread(2), o.thread(3)
	x := o.obj(7)
	e := &trace.Event{Kind: trace.KindRelease, Obj: 7}
	kept := func() int {
		n := 0
		for _, p := range x.pub {
			if p.set {
				n++
			}
		}
		return n
	}
	// Outside any transaction, a's clock knows of none: nothing kept.
	o.publish(a, x, slotPub, &x.pub, e)
	if kept() != 0 {
		t.Fatalf("a clock of no open transaction was kept: %v", x.pub)
	}
	o.open(a)
	o.publish(a, x, slotPub, &x.pub, e)
	o.open(b)
	o.publish(b, x, slotPub, &x.pub, e)
	if len(x.pub) != 2 || x.pub.index(int32(a)) < 0 || x.pub.index(int32(b)) < 0 {
		t.Fatalf("published clocks %v, want a's and b's", x.pub)
	}
	// a's clock is listed for a's end, and extended by it.
	if len(o.th[a].learned) != 1 || o.th[a].learned[0] != (obsSlot{x, slotPub, int32(a), 0}) {
		t.Errorf("a's list of clocks %v", o.th[a].learned)
	}
	o.end(a)
	// c acquires: b's clock is kept, a's (of an ended transaction) is
	// forgotten.
	o.acquireAll(c, x, &x.pub, e)
	if kept() != 1 || x.pub.index(int32(b)) < 0 {
		t.Errorf("published clocks after a's end %v, want b's only", x.pub)
	}
	if o.th[c].c.Get(o.th[b].slot) != o.th[b].begin {
		t.Errorf("c did not learn b's transaction: %v", o.th[c].c)
	}
	// b's transaction ends: the next acquisition forgets its clock.
	o.end(b)
	o.acquireAll(c, x, &x.pub, e)
	if kept() != 0 {
		t.Errorf("published clocks %v, want none", x.pub)
	}
	if (obsSlot{x, slotPub, int32(b), 1}).clock() != nil {
		t.Errorf("a forgotten clock's slot names a clock")
	}
	// A publication of a clock that knows of no open transaction
	// replaces the goroutine's earlier one: nothing is kept.
	o.open(c)
	o.publish(c, x, slotPub, &x.pub, e)
	o.end(c)
	o.open(a)
	o.end(a)
	o.learn(c, o.th[a].c) // a change of c's clock, of nothing open
	o.publish(c, x, slotPub, &x.pub, e)
	if kept() != 0 {
		t.Errorf("published clocks %v, want c's forgotten", x.pub)
	}
}

func TestObservedTouch(t *testing.T) {
	o := NewObserved(ObservedOptions{})
	a, b, c := o.thread(1), o.thread(2), o.thread(3)
	o.open(a)
	o.open(b)
	o.open(c)
	o.end(c) // slot 2 now free: its generation 3 names an ended transaction
	x := o.obj(7)
	x.r = pubs{{g: int32(c), set: true}}
	w, r2 := obsSlot{x: x, kind: slotW}, obsSlot{x, slotR, int32(c), 0}
	lists := func() [3]int {
		return [3]int{len(o.th[a].learned), len(o.th[b].learned), len(o.th[c].learned)}
	}
	// The clock knows of b's transaction, not of a's (0 < 1), and of
	// c's, which has ended.
	o.touch(w, gclock{0, 2, 3})
	o.touch(w, gclock{0, 2, 3})
	if x.learned(0, 1) || !x.learned(1, 2) || x.learned(1, 1) || x.learned(2, 3) || x.learned(5, 1) {
		t.Errorf("learnB = %v, want [0 2 0]", x.learnB)
	}
	if got := lists(); got != [3]int{0, 1, 0} {
		t.Errorf("lists of clocks: %v, want [0 1 0]", got)
	}
	// Another clock of x is listed too.
	o.touch(r2, gclock{1, 2})
	if !x.learned(0, 1) || !x.learned(1, 2) {
		t.Errorf("learnB = %v, want [1 2 0]", x.learnB)
	}
	if got := lists(); got != [3]int{1, 2, 0} {
		t.Errorf("lists of clocks: %v, want [1 2 0]", got)
	}
	if o.th[a].learned[0] != r2 || o.th[b].learned[0] != w || o.th[b].learned[1] != r2 {
		t.Errorf("lists %v %v, want [r2] [w r2]", o.th[a].learned, o.th[b].learned)
	}
	if r2.clock() != &x.r[0] || w.clock() != &x.w {
		t.Errorf("slots name the wrong clocks")
	}
}

func TestObservedObj(t *testing.T) {
	o := NewObserved(ObservedOptions{})
	ids := []uint64{0, 5, 3, denseObjs - 1, denseObjs, 1 << 40, 5, 1 << 40}
	got := map[uint64]*obsObj{}
	for _, id := range ids {
		x := o.obj(trace.ObjID(id))
		if x.id != trace.ObjID(id) || x.wThr != -1 {
			t.Errorf("obj(%d) = id %d, wThr %d", id, x.id, x.wThr)
		}
		o.lastO = nil // look it up, not in the one-object cache
		if y := o.obj(trace.ObjID(id)); y != x {
			t.Errorf("obj(%d) gave two objects", id)
		}
		if prev, ok := got[id]; ok && prev != x {
			t.Errorf("obj(%d) is not the object it was", id)
		}
		got[id] = x
	}
	if len(got) != 6 {
		t.Errorf("%d objects, want 6", len(got))
	}
	if len(o.objs) != 2 {
		t.Errorf("%d objects in the map, want the 2 with large ids", len(o.objs))
	}
}

// TestObservedShortLivedGoroutines checks that observed mode's memory
// follows the goroutines alive at once, not those of the whole run: on a
// trace of thousands of short-lived goroutines, 16 alive at a time, the
// clocks are as wide as the transactions open at once, and each object
// keeps only the clocks that knew of one when it last looked.
func TestObservedShortLivedGoroutines(t *testing.T) {
	gen := tracegen.NewShape(tracegen.Shape{Seed: 1, Events: 300_000, Goroutines: 16, Locks: 16, Vars: 64, Lifetime: 2, Interleaved: true})
	o := NewObserved(ObservedOptions{Object: gen.Object})
	for {
		e, err := gen.Next()
		if err != nil {
			break
		}
		o.Step(&e)
	}
	if f := o.Finish(); f != nil {
		t.Fatalf("a cycle in a trace of atomic units: %+v", f)
	}
	if len(o.th) < 5000 {
		t.Fatalf("%d goroutines; the test wants thousands", len(o.th))
	}
	if len(o.cur) > 16 {
		t.Errorf("%d slots for 16 goroutines alive at a time", len(o.cur))
	}
	widest, kept := 0, 0
	for _, th := range o.th {
		widest = max(widest, len(th.c))
	}
	for _, x := range append(slices.Collect(maps.Values(o.objs)), o.dense...) {
		if x != nil {
			kept = max(kept, len(x.r), len(x.pub), len(x.rpub))
		}
	}
	t.Logf("%d goroutines, %d slots, widest clock %d, longest list %d", len(o.th), len(o.cur), widest, kept)
	// A list keeps a clock until an acquisition finds that it knows of
	// no open transaction any more (reads until the next write), so it
	// may hold those of goroutines that have ended since: a few times
	// the goroutines alive, where one clock per goroutine of the run
	// would be thousands.
	if widest > 16 || kept > 64 {
		t.Errorf("widest clock %d, longest list of an object's clocks %d; want at most 16 and 64", widest, kept)
	}
}
