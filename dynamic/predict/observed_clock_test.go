package predict

import (
	"slices"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

func TestJoinChanged(t *testing.T) {
	cases := []struct {
		a, b, want VC
		changed    bool
	}{
		{VC{1, 2}, VC{1, 2}, VC{1, 2}, false},
		{VC{1, 2}, VC{0, 1}, VC{1, 2}, false},
		{VC{1, 2}, VC{2, 1}, VC{2, 2}, true},
		{VC{1}, VC{1, 0, 0}, VC{1, 0, 0}, false},
		{VC{1}, VC{0, 0, 3}, VC{1, 0, 3}, true},
		{nil, VC{0, 4}, VC{0, 4}, true},
		{VC{5, 5}, nil, VC{5, 5}, false},
	}
	for _, c := range cases {
		a := c.a.Clone()
		got := joinChanged(&a, c.b)
		if got != c.changed || !slices.Equal(a, c.want) {
			t.Errorf("joinChanged(%v, %v) = %v, %v; want %v, %v", c.a, c.b, a, got, c.want, c.changed)
		}
	}
}

func TestObsThreadSeen(t *testing.T) {
	var th obsThread
	if th.knows(3, 1) {
		t.Errorf("a new goroutine knows version 1 of goroutine 3")
	}
	th.saw(3, 5)
	th.saw(3, 2) // an older version does not lower what is known
	th.saw(1, 0) // version 0 names no clock
	for _, c := range []struct {
		u    int
		v    uint64
		want bool
	}{
		{3, 1, true}, {3, 5, true}, {3, 6, false},
		{3, 0, false}, // an extended clock is never known
		{1, 1, false}, {0, 1, false}, {7, 1, false},
	} {
		if got := th.knows(c.u, c.v); got != c.want {
			t.Errorf("knows(%d, %d) = %v, want %v", c.u, c.v, got, c.want)
		}
	}

	th = obsThread{c: VC{1, 0}, ver: 1}
	th.learn(VC{0, 0})
	if th.ver != 1 {
		t.Errorf("learning nothing new changed the version to %d", th.ver)
	}
	th.learn(VC{0, 2, 1})
	if th.ver != 2 || !slices.Equal(th.c, VC{1, 2, 1}) {
		t.Errorf("after learning: clock %v version %d, want [1 2 1] version 2", th.c, th.ver)
	}
}

func TestObservedTouch(t *testing.T) {
	o := NewObserved(ObservedOptions{})
	o.thread(1)
	o.thread(2)
	o.thread(3)
	o.th[0].active, o.th[0].begin = true, 4
	o.th[1].active, o.th[1].begin = true, 2
	o.th[2].active, o.th[2].begin = false, 1 // no open transaction
	x := o.obj(7)
	x.r = make([]pubClock, 3)
	w, r2 := obsSlot{x, slotW, 0}, obsSlot{x, slotR, 2}
	lists := func() [3]int {
		return [3]int{len(o.th[0].learned), len(o.th[1].learned), len(o.th[2].learned)}
	}
	// The clock knows of goroutine 1's transaction, not of goroutine 0's
	// (3 < 4); goroutine 2's has ended.
	o.touch(w, VC{3, 2, 5})
	o.touch(w, VC{3, 2, 5})
	if x.learned(0, 4) || !x.learned(1, 2) || x.learned(1, 1) || x.learned(2, 1) || x.learned(5, 1) {
		t.Errorf("learnB = %v, want [0 2 0]", x.learnB)
	}
	if got := lists(); got != [3]int{0, 1, 0} {
		t.Errorf("lists of clocks: %v, want [0 1 0]", got)
	}
	// Another clock of x is listed too.
	o.touch(r2, VC{4, 2})
	if !x.learned(0, 4) || !x.learned(1, 2) {
		t.Errorf("learnB = %v, want [4 2 0]", x.learnB)
	}
	if got := lists(); got != [3]int{1, 2, 0} {
		t.Errorf("lists of clocks: %v, want [1 2 0]", got)
	}
	if o.th[0].learned[0] != r2 || o.th[1].learned[0] != w || o.th[1].learned[1] != r2 {
		t.Errorf("lists %v %v, want [r2] [w r2]", o.th[0].learned, o.th[1].learned)
	}
	if r2.clock() != &x.r[2] || w.clock() != &x.w {
		t.Errorf("slots name the wrong clocks")
	}
}

func TestObsThreadSawAll(t *testing.T) {
	var th obsThread
	th.saw(0, 9)
	th.sawAll(1, 4, []uint64{2, 0, 7, 3})
	want := []uint64{9, 4, 7, 3} // goroutine 0's own entry was later
	if !slices.Equal(th.seen, want) {
		t.Errorf("seen = %v, want %v", th.seen, want)
	}
	th.sawAll(2, 1, nil)
	if !slices.Equal(th.seen, want) {
		t.Errorf("an older version lowered seen to %v", th.seen)
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
