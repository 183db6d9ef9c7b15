package tracegen

import (
	"fmt"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

func TestValid(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		cfg := Config{Seed: seed, Events: 50 + int(seed)*10, Goroutines: 1 + int(seed%6), Locks: 1 + int(seed%5), RWLocks: int(seed % 3), MaxNesting: 1 + int(seed%3), SyncProb: 0.2}
		tr := Trace(cfg)
		v := trace.NewValidator(tr)
		v.CheckCapacity = true
		for _, e := range tr.Events {
			if err := v.Step(e); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	cfg := Config{Seed: 42, Events: 2000, Goroutines: 5, Locks: 4, RWLocks: 2, SyncProb: 0.3}
	a, b := Trace(cfg), Trace(cfg)
	if len(a.Events) != len(b.Events) {
		t.Fatalf("lengths %d and %d", len(a.Events), len(b.Events))
	}
	for i := range a.Events {
		if a.Events[i] != b.Events[i] {
			t.Fatalf("event %d differs: %v and %v", i, a.Events[i], b.Events[i])
		}
	}
	cfg.Seed++
	c := Trace(cfg)
	same := len(c.Events) == len(a.Events)
	for i := 0; same && i < len(a.Events); i++ {
		same = a.Events[i] == c.Events[i]
	}
	if same {
		t.Error("seeds 42 and 43 give the same trace")
	}
}

// TestShape checks that the generator honours its knobs: about Events
// events, every kind of operation it promises, and the nesting bound.
func TestShape(t *testing.T) {
	cfg := Config{Seed: 7, Events: 20000, Goroutines: 8, Locks: 16, RWLocks: 4, MaxNesting: 3, SyncProb: 0.1, Chans: 3}
	tr := Trace(cfg)
	if n := len(tr.Events); n < cfg.Events*9/10 || n > cfg.Events {
		t.Errorf("%d events, want about %d", n, cfg.Events)
	}
	kinds := make(map[trace.Kind]int)
	depth := make(map[trace.GoID]int)
	gs := make(map[trace.GoID]bool)
	for _, e := range tr.Events {
		kinds[e.Kind]++
		gs[e.G] = true
		switch e.Kind {
		case trace.KindAcquire, trace.KindRAcquire:
			depth[e.G]++
			if depth[e.G] > cfg.MaxNesting {
				t.Fatalf("event %v nests %d locks deep", e, depth[e.G])
			}
		case trace.KindRelease, trace.KindRRelease:
			depth[e.G]--
		}
	}
	for _, k := range []trace.Kind{trace.KindRead, trace.KindWrite, trace.KindAcquire, trace.KindRelease,
		trace.KindRAcquire, trace.KindRRelease, trace.KindFork, trace.KindEnd, trace.KindSend, trace.KindRecv,
		trace.KindWGAdd, trace.KindWGDone, trace.KindWGWait, trace.KindOnceDo, trace.KindAtomicLoad,
		trace.KindAtomicStore, trace.KindAtomicRMW, trace.KindRegionBegin, trace.KindRegionEnd,
		trace.KindClose, trace.KindCondSignal, trace.KindCondBroadcast, trace.KindCondWait} {
		if kinds[k] == 0 {
			t.Errorf("no %s event", k)
		}
	}
	if len(gs) != cfg.Goroutines {
		t.Errorf("%d goroutines, want %d", len(gs), cfg.Goroutines)
	}
	if err := trace.Validate(tr); err != nil {
		t.Error(err)
	}
}

func TestStreamsLargeTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a million events")
	}
	g := New(Config{Seed: 1, Events: 1_000_000, Goroutines: 8, Locks: 16})
	v := trace.NewValidator(g)
	n := 0
	for {
		e, err := g.Next()
		if err != nil {
			break
		}
		if err := v.Step(e); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n < 990_000 {
		t.Errorf("%d events, want about a million", n)
	}
}

func TestNoSync(t *testing.T) {
	tr := Trace(Config{Seed: 3, Events: 3000, SyncProb: -1, RegionProb: -1, LocalVars: -1})
	for _, e := range tr.Events {
		switch e.Kind {
		case trace.KindSend, trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW,
			trace.KindOnceDo, trace.KindCondSignal, trace.KindCondBroadcast, trace.KindRegionBegin:
			t.Fatalf("event %v with sync and regions off", e)
		}
		if e.Obj >= localBase {
			t.Fatalf("event %v touches a local with LocalVars off", e)
		}
	}
	if err := trace.Validate(tr); err != nil {
		t.Error(err)
	}
}

func TestShapeValid(t *testing.T) {
	for seed := uint64(0); seed < 60; seed++ {
		s := Shape{Seed: seed, Events: 3000, Goroutines: 2 + int(seed%7), Locks: 1 + int(seed%5), Vars: 16 + int(seed%3)*40,
			Nesting: 1 + int(seed%4), Unlocked: float64(seed%3) * 0.1, Interleaved: seed%2 == 0, Violations: seed%4 < 2}
		tr := ShapeTrace(s)
		if len(tr.Events) < s.Events {
			t.Fatalf("%v: %d events, want at least %d", s, len(tr.Events), s.Events)
		}
		v := trace.NewValidator(tr)
		for _, e := range tr.Events {
			if err := v.Step(e); err != nil {
				t.Fatalf("%v: %v", s, err)
			}
		}
	}
}

// TestShapeLifetime checks the short-lived goroutines of Shape.Lifetime:
// a valid trace, goroutines by the hundred or thousand, each but main and
// the last ones ended.
func TestShapeLifetime(t *testing.T) {
	for _, s := range []Shape{
		{Seed: 1, Events: 30000, Goroutines: 8, Lifetime: 1},
		{Seed: 2, Events: 30000, Goroutines: 16, Locks: 4, Vars: 16, Nesting: 2, Unlocked: 0.2, Interleaved: true, Violations: true, Lifetime: 2},
	} {
		tr := ShapeTrace(s)
		if err := trace.Validate(tr); err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		gs := make(map[trace.GoID]bool)
		ends := 0
		for _, e := range tr.Events {
			gs[e.G] = true
			if e.Kind == trace.KindEnd {
				ends++
			}
		}
		if len(gs) < 500 {
			t.Errorf("%v: %d goroutines, want hundreds at least", s, len(gs))
		}
		if ends < len(gs)-s.Goroutines {
			t.Errorf("%v: %d of %d goroutines ended, want all but at most %d", s, ends, len(gs), s.Goroutines)
		}
	}
}

// TestShapeLong checks the units of Shape.Long: a valid trace in which
// every access and every other lock's acquire is made holding lock 0,
// and each unit holds lock 0 throughout Long critical sections.
func TestShapeLong(t *testing.T) {
	for _, s := range []Shape{
		{Seed: 1, Events: 20000, Goroutines: 4, Locks: 64, Vars: 1024, Nesting: 2, Long: 100},
		{Seed: 2, Events: 20000, Goroutines: 8, Locks: 3, Vars: 30, Nesting: 4, Interleaved: true, Long: 7},
	} {
		tr := ShapeTrace(s)
		if err := trace.Validate(tr); err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		lock0 := trace.ObjID(shapeLockBase)
		holder := trace.GoID(0)
		sections := 0
		for _, e := range tr.Events {
			switch {
			case e.Kind == trace.KindAcquire && e.Obj == lock0:
				holder, sections = e.G, 0
			case e.Kind == trace.KindRelease && e.Obj == lock0:
				if sections != s.Long {
					t.Fatalf("%v: %v ends a unit of %d critical sections, want %d", s, e, sections, s.Long)
				}
				holder = 0
			case e.Kind == trace.KindAcquire || e.Kind == trace.KindRead || e.Kind == trace.KindWrite:
				if e.G != holder {
					t.Fatalf("%v: %v is made without lock 0", s, e)
				}
				if e.Kind != trace.KindAcquire && e.Obj == shapeVarBase {
					sections++ // each section accesses x0
				}
			}
		}
	}
}

// TestShapeFixed checks the code paths of Shape.Fixed: a valid trace in
// which every unit of a path makes the same steps (operation, site, lock),
// only its variables varying, and each access site touches the variables
// of one lock only; without Fixed, units of a path differ.
func TestShapeFixed(t *testing.T) {
	for _, fixed := range []bool{true, false} {
		s := Shape{Seed: 5, Events: 20000, Goroutines: 8, Locks: 16, Vars: 64, Nesting: 3, Unlocked: 0.05, Interleaved: true, Violations: true, Fixed: fixed}
		tr := ShapeTrace(s)
		if err := trace.Validate(tr); err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		type unit struct {
			g    trace.GoID
			inst uint64
		}
		steps := make(map[unit]string)
		region := make(map[unit]trace.RegionID)
		lockOf := make(map[trace.SiteID]trace.ObjID)
		mixed := 0
		for _, e := range tr.Events {
			if e.Region == 0 {
				continue
			}
			u := unit{e.G, e.Inst}
			region[u] = e.Region
			obj := e.Obj
			if e.Kind == trace.KindRead || e.Kind == trace.KindWrite {
				l := (e.Obj - shapeVarBase) / 8 % trace.ObjID(s.Locks)
				if prev, ok := lockOf[e.Site]; ok && prev != l {
					mixed++
				}
				lockOf[e.Site] = l
				obj = 0
			}
			steps[u] += fmt.Sprintf("%d/%d/%d ", e.Kind, e.Site, obj)
		}
		code := make(map[trace.RegionID]map[string]bool)
		for u, st := range steps {
			if code[region[u]] == nil {
				code[region[u]] = make(map[string]bool)
			}
			code[region[u]][st] = true
		}
		variants := 0
		for _, c := range code {
			variants = max(variants, len(c))
		}
		if fixed && (variants != 1 || mixed != 0) {
			t.Errorf("%v: a path has %d variants of its code, and %d accesses touch another lock's variable than their site's before", s, variants, mixed)
		}
		if !fixed && (variants < 2 || mixed == 0) {
			t.Errorf("%v: paths have at most %d variants, %d accesses of a site touch several locks' variables: want code drawn afresh", s, variants, mixed)
		}
	}
}
