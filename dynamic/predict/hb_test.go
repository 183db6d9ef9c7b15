package predict

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// tt builds a trace from a small line language used by this package's
// core tests, so that hand-written cases read like the papers' figures:
//
//	chan c 1        declare channel c with capacity 1
//	rw m            declare m as a RWMutex (other names are variables or mutexes)
//	1 rd x @3       goroutine 1 reads x at site 3
//	1 acq m         goroutine 1 locks m
//	1 fork 2        goroutine 1 starts goroutine 2
//	1 send c 1      goroutine 1 sends message 1 on c
//	1 begin r       goroutine 1 enters region r (instances are numbered per goroutine)
//	1 rd x in=r.2   the event is in instance 2 of region r (Region and Inst fields)
//
// Names map to object ids in order of first use; sites default to the
// event's line number.
func tt(t testing.TB, src string) *trace.Trace {
	t.Helper()
	tr := &trace.Trace{Objects: map[trace.ObjID]trace.Object{}}
	ids := map[string]trace.ObjID{}
	obj := func(name string, kind trace.ObjKind) trace.ObjID {
		id, ok := ids[name]
		if !ok {
			id = trace.ObjID(len(ids) + 1)
			ids[name] = id
			tr.Objects[id] = trace.Object{Kind: kind, Name: name}
		}
		return id
	}
	inst := map[[2]uint64]uint64{}
	for ln, line := range strings.Split(src, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "chan":
			c, _ := strconv.Atoi(f[2])
			id := obj(f[1], trace.ObjChan)
			tr.Objects[id] = trace.Object{Kind: trace.ObjChan, Name: f[1], Cap: c}
			continue
		case "rw":
			id := obj(f[1], trace.ObjRWMutex)
			tr.Objects[id] = trace.Object{Kind: trace.ObjRWMutex, Name: f[1]}
			continue
		}
		g, err := strconv.Atoi(f[0])
		if err != nil || len(f) < 2 {
			t.Fatalf("line %d: bad event %q", ln+1, line)
		}
		k, ok := trace.ParseKind(f[1])
		if !ok {
			t.Fatalf("line %d: bad kind %q", ln+1, f[1])
		}
		e := trace.Event{Seq: uint64(len(tr.Events)), G: trace.GoID(g), Kind: k, Site: trace.SiteID(ln + 1)}
		rest := f[2:]
		if n := len(rest); n > 0 && rest[n-1] == "outside" {
			e.Flags |= trace.Outside
			rest = rest[:n-1]
		}
		if n := len(rest); n > 0 && strings.HasPrefix(rest[n-1], "in=") {
			name, num, _ := strings.Cut(rest[n-1][3:], ".")
			e.Region = trace.RegionID(obj(name, trace.ObjUnknown))
			i, _ := strconv.Atoi(num)
			e.Inst = uint64(i)
			rest = rest[:n-1]
		}
		if n := len(rest); n > 0 && strings.HasPrefix(rest[n-1], "@") {
			s, _ := strconv.Atoi(rest[n-1][1:])
			e.Site = trace.SiteID(s)
			rest = rest[:n-1]
		}
		switch k {
		case trace.KindFork:
			a, _ := strconv.Atoi(rest[0])
			e.Arg = uint64(a)
		case trace.KindEnd:
		case trace.KindRegionBegin, trace.KindRegionEnd:
			r := obj(rest[0], trace.ObjUnknown)
			e.Region = trace.RegionID(r)
			key := [2]uint64{uint64(g), uint64(r)}
			if k == trace.KindRegionBegin {
				inst[key]++
			}
			e.Inst = inst[key]
		default:
			kind := trace.ObjVar
			switch k {
			case trace.KindAcquire, trace.KindRelease, trace.KindRAcquire, trace.KindRRelease:
				kind = trace.ObjMutex
			case trace.KindSend, trace.KindRecv, trace.KindClose:
				kind = trace.ObjChan
			case trace.KindWGAdd, trace.KindWGDone, trace.KindWGWait:
				kind = trace.ObjWaitGroup
			case trace.KindCondWait, trace.KindCondSignal, trace.KindCondBroadcast:
				kind = trace.ObjCond
			case trace.KindOnceDo:
				kind = trace.ObjOnce
			}
			e.Obj = obj(rest[0], kind)
			if len(rest) > 1 {
				a, _ := strconv.ParseInt(rest[1], 10, 64)
				e.Arg = uint64(a)
			}
		}
		tr.Events = append(tr.Events, e)
	}
	return tr
}

// hbClocks steps the whole trace and returns each event's epoch and clock.
func hbClocks(tr *trace.Trace, opts HBOptions) ([]Epoch, []VC) {
	opts.Object = tr.Object
	h := NewHB(opts)
	eps := make([]Epoch, len(tr.Events))
	vcs := make([]VC, len(tr.Events))
	for i := range tr.Events {
		vcs[i] = h.Step(&tr.Events[i]).Clone()
		eps[i] = h.Epoch()
	}
	return eps, vcs
}

func TestHB(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		locks  bool
		before [][2]int // event indices a, b with a before b
		notBef [][2]int // a not before b
	}{
		{"fork", `
			1 wr x
			1 fork 2
			1 wr x
			2 rd x`, false, [][2]int{{0, 3}}, [][2]int{{2, 3}, {3, 2}}},
		{"unbuffered rendezvous", `
			chan c 0
			1 wr x
			2 wr y
			1 send c 1
			2 recv c 1
			1 rd y
			2 rd x`, false, [][2]int{{0, 5}, {1, 4}, {0, 3}}, [][2]int{{4, 0}}},
		{"buffered send does not wait", `
			chan c 1
			1 wr x
			2 wr y
			1 send c 1
			2 recv c 1
			1 rd y
			2 rd x`, false, [][2]int{{0, 5}}, [][2]int{{1, 4}}},
		{"buffered capacity edge", `
			chan c 1
			2 wr y
			2 recv c 1
			1 send c 1
			1 send c 2
			1 rd y`, false, [][2]int{{0, 4}}, nil},
		{"close", `
			1 wr x
			1 close c
			2 recv c 0
			2 rd x`, false, [][2]int{{0, 3}}, nil},
		{"waitgroup", `
			1 wgadd w 2
			2 wr x
			2 wgdone w
			3 wr y
			3 wgadd w -1
			1 wgwait w
			1 rd x
			1 rd y`, false, [][2]int{{1, 6}, {3, 7}}, [][2]int{{0, 1}}},
		{"cond", `
			1 wr x
			1 csignal c
			2 cwait c
			2 rd x`, false, [][2]int{{0, 3}}, nil},
		{"once", `
			1 wr x
			1 once o 1
			2 once o 0
			2 rd x`, false, [][2]int{{0, 3}}, nil},
		{"atomics", `
			1 wr x
			1 astore a
			2 aload a
			2 rd x
			3 wr y
			3 aload a
			3 armw a
			2 aload a
			2 rd y`, false, [][2]int{{0, 3}, {4, 8}}, [][2]int{{4, 3}}},
		{"ended goroutine", `
			1 fork 2
			2 wr x
			2 wgdone w
			2 end
			1 fork 3
			3 wr x
			1 wgwait w
			1 rd x
			1 fork 4
			4 rd x
			3 end
			4 end`, false, [][2]int{{1, 7}, {1, 9}}, [][2]int{{1, 5}, {5, 7}, {5, 9}}},
		{"sender ended before its receive", `
			chan c 1
			1 fork 2
			2 wr x
			2 send c 1
			2 send c 2
			2 end
			1 recv c 1
			1 rd x
			1 recv c 2`, false, [][2]int{{2, 7}}, nil},
		// The second closer's next close publishes its own clock, not
		// the first closer's too, though the two are in different
		// leaves of the tree (16 goroutines between them).
		{"closed twice", `
			1 wr x
			1 close c
			10 wr z
			11 wr z
			12 wr z
			13 wr z
			14 wr z
			15 wr z
			16 wr z
			17 wr z
			18 wr z
			19 wr z
			20 wr z
			21 wr z
			22 wr z
			23 wr z
			24 wr z
			25 wr z
			2 wr y
			2 close c
			3 recv c 0
			3 rd x
			3 rd y
			2 close d
			4 recv d 0
			4 rd x`, false, [][2]int{{0, 21}, {18, 22}, {18, 25}}, [][2]int{{0, 25}}},
		{"locks ignored", `
			1 acq m
			1 wr x
			1 rel m
			2 acq m
			2 rd x
			2 rel m`, false, nil, [][2]int{{1, 4}}},
		{"locks as edges", `
			rw m
			1 acq m
			1 wr x
			1 rel m
			2 racq m
			2 rd x
			2 rrel m
			3 racq m
			3 rd x
			3 rrel m
			1 acq m
			1 wr x`, true, [][2]int{{1, 4}, {4, 10}, {7, 10}}, [][2]int{{4, 7}, {7, 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := tt(t, tc.src)
			eps, vcs := hbClocks(tr, HBOptions{LockEdges: tc.locks})
			for _, p := range tc.before {
				if !eps[p[0]].Before(vcs[p[1]]) {
					t.Errorf("event %d should happen before %d (%v, %v)", p[0], p[1], eps[p[0]], vcs[p[1]])
				}
			}
			for _, p := range tc.notBef {
				if eps[p[0]].Before(vcs[p[1]]) {
					t.Errorf("event %d should not happen before %d (%v, %v)", p[0], p[1], eps[p[0]], vcs[p[1]])
				}
			}
		})
	}
}

// The clock of an ended goroutine is dropped (or kept for a new one to
// reuse): a run of short-lived goroutines, each of whose clocks grows as
// wide as the goroutines before it, holds clocks of the goroutines alive
// only, not of all of them.
func TestHBEndedClocks(t *testing.T) {
	var src strings.Builder
	const n = 2000
	for g := 2; g < n+2; g++ {
		fmt.Fprintf(&src, "1 fork %d\n%d wr x\n%d wgdone w\n%d end\n", g, g, g, g)
	}
	tr := tt(t, src.String())
	h := NewHB(HBOptions{Object: tr.Object})
	for i := range tr.Events {
		h.Step(&tr.Events[i])
	}
	words := 0
	for i := range h.Goroutines() {
		words += cap(h.Clock(i))
	}
	for _, c := range h.spare {
		words += cap(c.vc)
	}
	// Goroutine 1's clock and the spare ones, each as wide as the
	// goroutines (with the room that growing leaves), against n times
	// that if every ended goroutine's were kept.
	if max := (1 + maxSpare) * 2 * (n + 1); words > max {
		t.Errorf("the clocks hold %d words after %d goroutines ended, want at most %d", words, n, max)
	}
	if c := h.Clock(h.Index(2)); c != nil {
		t.Errorf("an ended goroutine's clock is %v, want nil", c)
	}
}

// The owner shortcut of a synchronisation object's clock (a copy of the
// clock of the goroutine that last published it, updated by the leaves
// changed since) gives the clocks that joining every time gives, at
// every event: on generated traces of every kind of operation, with lock
// edges and without, and of short-lived goroutines.
func TestHBObjOwners(t *testing.T) {
	trs := generatedTraces()
	trs = append(trs, tracegen.ShapeTrace(tracegen.Shape{Seed: 9, Events: 20000, Goroutines: 8, Vars: 8, Locks: 4, Lifetime: 2, Interleaved: true, Unlocked: 0.1}))
	compareHB(t, trs, &objOwners)
}

// generatedTraces are six generated traces of every kind of operation,
// of 2 to 17 goroutines.
func generatedTraces() []*trace.Trace {
	var trs []*trace.Trace
	for seed := range uint64(6) {
		trs = append(trs, tracegen.Trace(tracegen.Config{Seed: seed, Events: 20000, Goroutines: 2 + int(seed)*3, Locks: 8, RWLocks: 2,
			MaxNesting: 3, SyncProb: 0.2, Chans: 3, Switch: 0.1 * float64(seed%3+1)}))
	}
	return trs
}

// compareHB steps HB over each trace, with lock edges and without, with
// *shortcut on and then off, and fails unless every event's clock is the
// same; it leaves *shortcut on.
func compareHB(t *testing.T, trs []*trace.Trace, shortcut *bool) {
	t.Helper()
	defer func() { *shortcut = true }()
	for k, tr := range trs {
		for _, edges := range []bool{false, true} {
			*shortcut = true
			h := NewHB(HBOptions{Object: tr.Object, LockEdges: edges})
			var got []VC
			for i := range tr.Events {
				got = append(got, h.Step(&tr.Events[i]).Clone())
			}
			*shortcut = false
			ref := NewHB(HBOptions{Object: tr.Object, LockEdges: edges})
			for i := range tr.Events {
				want := ref.Step(&tr.Events[i])
				if !got[i].LEQ(want) || !want.LEQ(got[i]) {
					t.Fatalf("trace %d, lock edges %v: event %d (%v): clock %v, want %v", k, edges, i, tr.Events[i].Kind, got[i], want)
				}
			}
		}
	}
}

func TestVC(t *testing.T) {
	a, b := VC{1, 2}, VC{1, 2, 3}
	if !a.LEQ(b) || b.LEQ(a) || !(VC{1, 0, 0}).LEQ(VC{1}) {
		t.Fatal("LEQ")
	}
	c := a.Clone()
	c.join(b)
	if !b.LEQ(c) || !c.LEQ(b) {
		t.Fatalf("join: %v", c)
	}
	if a[1] != 2 {
		t.Fatal("Clone shares storage")
	}
}

// ClockBound cuts a trace where its live goroutines' clocks would pass
// the bound: main forks goroutines that do not end, and the product of
// the live ones and those seen passes 100 words at the eleventh fork;
// goroutines that end as the next starts never do.
func TestClockBound(t *testing.T) {
	var alive, chain strings.Builder
	for g := 2; g < 40; g++ {
		fmt.Fprintf(&alive, "1 fork %d\n%d wr x\n", g, g)
		fmt.Fprintf(&chain, "1 fork %d\n%d wr x\n%d end\n", g, g, g)
	}
	tr := tt(t, alive.String())
	n, why := ClockBound(tr, 100)
	// At the 10th fork (event 18), 11 goroutines are alive: 121 words.
	if n != 18 || why != "11 goroutines alive at once, each with a clock as wide as the 11 goroutines seen, would take more than 0 MB" {
		t.Errorf("bound at event %d (%q), want 18", n, why)
	}
	tr = tt(t, chain.String())
	if n, why := ClockBound(tr, 100); n != len(tr.Events) || why != "" {
		t.Errorf("a chain of goroutines cut at event %d of %d (%q), want none", n, len(tr.Events), why)
	}
}

// The leaf identities (HB.ids) change no clock: every event's clock is
// the same with them off, on traces of a few goroutines and of thousands
// of short-lived ones, whose clocks are hundreds of leaves wide.
func TestHBLeafIDs(t *testing.T) {
	trs := generatedTraces()
	for seed := range uint64(3) {
		trs = append(trs, tracegen.ShapeTrace(tracegen.Shape{Seed: 9 + seed, Events: 60000, Goroutines: 8 << seed, Vars: 8, Locks: 4, Lifetime: 2, Interleaved: seed != 1, Unlocked: 0.1}))
	}
	h := NewHB(HBOptions{Object: trs[len(trs)-1].Object})
	for i := range trs[len(trs)-1].Events {
		h.Step(&trs[len(trs)-1].Events[i])
	}
	if h.Goroutines() < 1000 {
		t.Fatalf("the last trace has %d goroutines, want thousands", h.Goroutines())
	}
	compareHB(t, trs, &leafIDs)
}
