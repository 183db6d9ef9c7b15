package replay

import (
	"fmt"
	"slices"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// TestSiteExpr checks which expression a step's access is checked
// through: its object's name where that names this site's expression
// (or a field of it), the site's own expression where the object was
// named at another (one goroutine's b.accts[to] is another's
// b.accts[from]), and none for a field named after another expression.
func TestSiteExpr(t *testing.T) {
	tr := &trace.Trace{
		Sites: []trace.Site{{}, {File: "bank.go", Line: 64, Col: 2}, {File: "bank.go", Line: 63, Col: 2}},
		Objects: map[trace.ObjID]trace.Object{
			0x10: {Kind: trace.ObjVar, Name: "b.accts[to]"},
			0x20: {Kind: trace.ObjVar, Name: "b.accts[to].n"},
		},
		Events: []trace.Event{
			{G: 1, Kind: trace.KindRead, Obj: 0x10, Site: 1},
			{G: 1, Kind: trace.KindRead, Obj: 0x20, Site: 1},
			{G: 2, Kind: trace.KindRead, Obj: 0x10, Site: 2},
			{G: 2, Kind: trace.KindRead, Obj: 0x20, Site: 2},
		},
	}
	exprs := map[int][]string{64: {"b.accts", "b.accts[to]"}, 63: {"b.accts", "b.accts[from]"}}
	exprsAt := func(s trace.Site) []string { return exprs[s.Line] }
	for i, want := range []string{"b.accts[to]", "b.accts[to].n", "b.accts[from]", ""} {
		e := tr.Events[i]
		name := tr.Object(e.Obj).Name
		if got := siteExpr(name, tr.Site(e.Site), exprsAt); got != want {
			t.Errorf("event %d: %q, want %q", i, got, want)
		}
		if got := siteExpr(name, tr.Site(e.Site), nil); got != name {
			t.Errorf("event %d without the plan: %q, want the object's name %q", i, got, name)
		}
	}
	// Two expressions of the name's form at one site: not checked.
	two := func(trace.Site) []string { return []string{"m[a]", "m[b]"} }
	if got := siteExpr("m[c]", trace.Site{}, two); got != "" {
		t.Errorf("two candidates: %q, want none", got)
	}
}

// afterCallSites marks the write at column 22 of line 16 as made after
// its assignment's call returned.
type afterCallSites struct{}

func (afterCallSites) ExprsAt(trace.Site) []string { return nil }
func (afterCallSites) AfterCall(s trace.Site) bool { return s.Line == 16 && s.Col == 22 }

// TestFromTraceAfterCall: a write made once its assignment's call
// returned (claimed[g] = r.Claim(g+1)) is not held, since no breakpoint
// of its line stops the goroutine back from the call, and it is no new
// arrival at its line: the line's next run is its second arrival.
func TestFromTraceAfterCall(t *testing.T) {
	tr := &trace.Trace{
		Sites: []trace.Site{{},
			{File: "t_test.go", Line: 12, Col: 2},  // the go statement
			{File: "t_test.go", Line: 16, Col: 30}, // the call's read of r
			{File: "c.go", Line: 24, Col: 9},       // inside the call
			{File: "t_test.go", Line: 16, Col: 22}, // claimed[g] =
		},
		Objects: map[trace.ObjID]trace.Object{
			0x10: {Kind: trace.ObjVar, Name: "r"},
			0x20: {Kind: trace.ObjVar, Name: "r.owner"},
			0x30: {Kind: trace.ObjVar, Name: "claimed[g]"},
		},
		Events: []trace.Event{
			{Seq: 1, G: 1, Kind: trace.KindFork, Arg: 2, Site: 1},
			{Seq: 2, G: 2, Kind: trace.KindRead, Obj: 0x10, Site: 2},
			{Seq: 3, G: 2, Kind: trace.KindRead, Obj: 0x20, Site: 3},
			{Seq: 4, G: 2, Kind: trace.KindWrite, Obj: 0x30, Site: 4},
			{Seq: 5, G: 2, Kind: trace.KindRead, Obj: 0x10, Site: 2},
		},
	}
	f := predict.Finding{Witness: []uint64{2, 3, 4, 5}, WitnessFrom: 2}
	steps := func(sites Sites) []string {
		w, err := FromTrace(tr, f, sites)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range w.Steps {
			out = append(out, fmt.Sprintf("%s visit %d", s, s.Visit))
		}
		return out
	}
	want := []string{"t_test.go:16 rd r visit 1", "c.go:24 rd r.owner visit 1", "t_test.go:16 rd r visit 2"}
	if got := steps(afterCallSites{}); !slices.Equal(got, want) {
		t.Errorf("steps %q\nwant %q", got, want)
	}
	// Without the plan, the write is a step of its own, held on a second
	// arrival at the line that no breakpoint would stop.
	want = []string{"t_test.go:16 rd r visit 1", "c.go:24 rd r.owner visit 1", "t_test.go:16 wr claimed[g] visit 2", "t_test.go:16 rd r visit 2"}
	if got := steps(nil); !slices.Equal(got, want) {
		t.Errorf("steps without the plan %q\nwant %q", got, want)
	}
}

// TestFromTraceTestsEnd: a top-level test's end and TestMain's going
// on after m.Run, the events of the object the recorders name "the
// tests m.Run waits for", are not held: they are at a test's first line
// and at the line of the call, where no breakpoint stops a goroutine
// then (holding TestMain at its call would keep the tests from
// starting).
func TestFromTraceTestsEnd(t *testing.T) {
	tr := &trace.Trace{
		Sites: []trace.Site{{},
			{File: "main_test.go", Line: 12}, // TestMain's m.Run
			{File: "main_test.go", Line: 20}, // the test's first line
			{File: "main_test.go", Line: 22, Col: 2},
			{File: "main_test.go", Line: 13, Col: 5},
		},
		Objects: map[trace.ObjID]trace.Object{
			0x10: {Kind: trace.ObjVar, Name: "runs"},
			0x20: {Kind: trace.ObjWaitGroup, Name: "the tests m.Run waits for"},
		},
		Events: []trace.Event{
			{Seq: 1, G: 1, Kind: trace.KindFork, Arg: 2, Site: 1},
			{Seq: 2, G: 2, Kind: trace.KindWrite, Obj: 0x10, Site: 3},
			{Seq: 3, G: 2, Kind: trace.KindWGAdd, Arg: 1, Obj: 0x20, Site: 2},
			{Seq: 4, G: 2, Kind: trace.KindWGDone, Obj: 0x20, Site: 2},
			{Seq: 5, G: 1, Kind: trace.KindWGWait, Obj: 0x20, Site: 1},
			{Seq: 6, G: 1, Kind: trace.KindRead, Obj: 0x10, Site: 4},
		},
	}
	// TestMain's goroutine, the program's own, is matched by no
	// creation: a step of it would be an error.
	w, err := FromTrace(tr, predict.Finding{Witness: []uint64{2, 3, 4, 5}, WitnessFrom: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range w.Steps {
		got = append(got, s.String())
	}
	if want := []string{"main_test.go:22 wr runs"}; !slices.Equal(got, want) {
		t.Errorf("steps %q\nwant %q", got, want)
	}
}
