package record

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// testOrderEvents describes the events of the objects that stand for the
// tests' order, per object, as "kind who": who is "P" for the goroutine
// that forked the object's test (its parent), "C" for that test or
// another child of the same parent. The ends of a test's parallel
// subtests (subs) are described with the test as the parent.
func testOrderEvents(t *testing.T, tr *trace.Trace) (runs, barriers, subs [][]string, tests int) {
	t.Helper()
	parent := map[trace.GoID]trace.GoID{}
	byObj := map[trace.ObjID][]trace.Event{}
	var order []trace.ObjID
	for _, e := range tr.Events {
		if e.Kind == trace.KindFork {
			parent[trace.GoID(e.Arg)] = e.G
		}
		if !strings.HasPrefix(e.Kind.String(), "wg") || !isTestOrderObj(e.Obj) || e.Obj == testsEndObj {
			continue
		}
		if e.Obj == testsObj {
			tests++
			continue
		}
		if byObj[e.Obj] == nil {
			order = append(order, e.Obj)
		}
		byObj[e.Obj] = append(byObj[e.Obj], e)
	}
	for _, obj := range order {
		evs := byObj[obj]
		owner := evs[0].G // the parent that adds, for a run; the test, for a barrier
		if obj>>32 == testSubsObjs>>32 {
			owner = trace.GoID(obj & 0xffffffff)
		}
		var desc []string
		for _, e := range evs {
			who := "?"
			switch {
			case e.G == owner:
				who = "P"
			case parent[e.G] == owner:
				who = "C"
			}
			desc = append(desc, fmt.Sprintf("%s %s", e.Kind, who))
		}
		switch obj >> 32 {
		case testRunObjs >> 32:
			runs = append(runs, desc)
		case testSubsObjs >> 32:
			subs = append(subs, desc)
		default:
			barriers = append(barriers, desc)
		}
	}
	return runs, barriers, subs, tests
}

// Both recorders record the order in which the testing package runs the
// tests of testdata/record/subtests (testorder.go): each T.Run as an Add by
// the parent, a Done by the subtest it forked and a Wait by the parent,
// and the barrier of the test whose two subtests call t.Parallel as an
// Add and a Done by that test, then a Wait by each subtest, and the
// ends of those subtests as an Add and a Done by each, which the test
// waits for before its cleanups. The Delve recorder sees the top-level
// tests run by T.Run too; the instrumenting recorder orders them with
// the probes at their start and end.
func TestRecordTestOrder(t *testing.T) {
	run := []string{"wgadd P", "wgdone C", "wgwait P"}
	barrier := []string{"wgadd P", "wgdone P", "wgwait C", "wgwait C"}
	ends := []string{"wgadd C", "wgdone C", "wgadd C", "wgdone C", "wgwait P"}
	check := func(t *testing.T, tr *trace.Trace, wantRuns, wantTests int) {
		if err := trace.Validate(tr); err != nil {
			t.Fatal(err)
		}
		runs, barriers, subs, tests := testOrderEvents(t, tr)
		if len(runs) != wantRuns {
			t.Errorf("%d runs, want %d: %q", len(runs), wantRuns, runs)
		}
		for _, r := range runs {
			if !slices.Equal(r, run) {
				t.Errorf("a run's events %q, want %q", r, run)
			}
		}
		if len(barriers) != 1 || !slices.Equal(barriers[0], barrier) {
			t.Errorf("barriers %q, want one: %q", barriers, barrier)
		}
		if len(subs) != 1 || !slices.Equal(subs[0], ends) {
			t.Errorf("parallel subtests' ends %q, want one: %q", subs, ends)
		}
		if tests != wantTests {
			t.Errorf("%d events of the top-level tests' order, want %d", tests, wantTests)
		}
	}
	t.Run("delve", func(t *testing.T) {
		plan, bin := prepare(t, "subtests", false)
		tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
			t.Fatalf("outcome %+v", oc)
		}
		// Two top-level tests, four subtests of the first, two of the
		// second.
		check(t, tr, 8, 0)
	})
	t.Run("instrument", func(t *testing.T) {
		in, bin, root := prepareInstrumented(t, "subtests", false)
		tr, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: root})
		if err != nil {
			t.Fatal(err)
		}
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
			t.Fatalf("outcome %+v", oc)
		}
		// Wait, Add and Done of each of the two top-level tests.
		check(t, tr, 6, 6)
	})
}

// endsInit tells, by the sites' function names, the functions that the
// main goroutine runs once package initialisation is over.
func TestEndsInit(t *testing.T) {
	for name, want := range map[string]bool{
		"example.com/p.main":                      true,
		"example.com/p.main$1":                    true,
		"example.com/p.TestMain":                  true,
		"example.com/p_test.TestMain$2":           true,
		"example.com/p.Example":                   true,
		"example.com/p.ExampleT_M":                true,
		"example.com/p.init":                      false,
		"example.com/p.init#1":                    false,
		"example.com/p.init$1":                    false,
		"example.com/p.newLimit":                  false,
		"example.com/p.TestInit":                  false,
		"(*example.com/p.T).main":                 false,
		"github.com/jtolds/gls.NewContextManager": false,
		"": false,
	} {
		if got := endsInit(name); got != want {
			t.Errorf("endsInit(%q) = %v, want %v", name, got, want)
		}
	}
}

// What TestMain does before it calls m.Run happens before every test,
// and what the tests do before m.Run returns (testdata/record/testmain):
// with either recorder, the only finding is the parallel tests' lost
// update of shared, not TestMain's write of cfg, which the tests read,
// nor its read of runs after m.Run, which they write. The tests are
// forked from TestMain's goroutine (the instrumenting recorder does it
// while m.Run runs; the Delve recorder sees T.Run do it), and m.Run's
// return waits for the tests' ends (the instrumenting recorder's three,
// the Delve recorder's parallel two: it orders the other one by its
// run).
func TestRecordTestMain(t *testing.T) {
	want := []string{"filtered R-W-W shared main_test.go:51:rd main_test.go:54:wr main_test.go:54:wr"}
	check := func(t *testing.T, tr *trace.Trace, ends int) {
		t.Helper()
		if err := trace.Validate(tr); err != nil {
			t.Fatal(err)
		}
		forker := map[trace.GoID]trace.GoID{}
		var waiter trace.GoID
		var got []string
		for _, e := range tr.Events {
			if e.Kind == trace.KindFork {
				forker[trace.GoID(e.Arg)] = e.G
			}
			if e.Obj != testsEndObj {
				continue
			}
			who := "test"
			if e.Kind == trace.KindWGWait {
				who, waiter = "TestMain", e.G
			}
			got = append(got, e.Kind.String()+" "+who)
		}
		var wantEnds []string
		for range ends {
			wantEnds = append(wantEnds, "wgadd test", "wgdone test")
		}
		wantEnds = append(wantEnds, "wgwait TestMain")
		if !slices.Equal(got, wantEnds) {
			t.Errorf("events of the tests' ends %q, want %q", got, wantEnds)
		}
		for _, e := range tr.Events {
			if e.Obj == testsEndObj && e.Kind == trace.KindWGDone && forker[e.G] != waiter {
				t.Errorf("%v: the test's goroutine is forked by g%d, want TestMain's g%d", e, forker[e.G], waiter)
			}
		}
		if got := findings(tr); !slices.Equal(got, want) {
			t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	t.Run("delve", func(t *testing.T) {
		plan, bin := prepare(t, "testmain", false)
		tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
			t.Fatalf("outcome %+v", oc)
		}
		check(t, tr, 2)
	})
	t.Run("instrument", func(t *testing.T) {
		in, bin, root := prepareInstrumented(t, "testmain", false)
		check(t, recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root}), 3)
	})
}

// A goroutine that code avcheck does not rewrite starts (a timer's, in
// testdata/record/outside) is forked by trace.OutsideG, and its race
// with the test's setup stays predicted; a parallel test's goroutine is
// the testing package's (avrt.TestGo), not such a one, and the race it
// makes with the goroutine it starts keeps its level with no reason.
func TestInstrumentedOutside(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "outside", false)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root})
	forked := 0
	for _, e := range tr.Events {
		if e.Kind == trace.KindFork && e.G == trace.OutsideG {
			forked++
		}
	}
	if forked != 1 {
		t.Errorf("trace.OutsideG forks %d goroutines, want 1 (the timer's)", forked)
	}
	var got []string
	for _, f := range predict.Predict(tr, predict.Options{All: true}).Findings {
		s := fmt.Sprintf("%s %s %s", f.Level, f.Pattern, f.Var)
		for _, a := range f.Accesses {
			site := tr.Site(a.Site)
			s += fmt.Sprintf(" %s:%d:%s", filepath.Base(site.File), site.Line, a.Op)
		}
		if strings.Contains(f.Dropped, "started by code that avcheck does not rewrite") {
			s += " outside"
		} else if f.Dropped != "" {
			s += " dropped"
		}
		got = append(got, s)
	}
	want := []string{
		"predicted W-R s.limit outside_test.go:26:wr outside.go:13:rd outside",
		"predicted W-W b.n outside_test.go:46:wr outside_test.go:43:wr",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The breaker of testdata/record/recheck checks its flag under the read
// lock and, to open, again under the write lock: the plan marks the
// second read, and the recorder records it, as a re-check
// (trace.Rechecks), which predict takes for what the code acts on
// (testdata/predict/intent-recheck.txtar); the first read is no such
// check.
func TestInstrumentedRecheck(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "recheck", false)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root})
	got := map[string]int{}
	for _, e := range tr.Events {
		if s := tr.Site(e.Site); e.Kind == trace.KindRead && filepath.Base(s.File) == "recheck.go" {
			got[fmt.Sprintf("%d %s rechecks=%v", s.Line, tr.Object(e.Obj).Name, e.Flags&trace.Rechecks != 0)]++
		}
	}
	want := map[string]int{
		"16 b.open rechecks=false":  1,
		"31 b.fails rechecks=false": 1,
		"37 b.open rechecks=true":   1,
		"45 b.fails rechecks=false": 3,
	}
	if !maps.Equal(got, want) {
		t.Errorf("reads recorded: %v, want %v", got, want)
	}
}

// A test's cleanups run after its function returned and its parallel
// subtests ended, and before the next test or its parent goes on
// (testdata/record/cleanups): with either recorder, the settings that
// cleanups restore do not race with the next test's reads, its parent's,
// its parallel subtests', or the example's, which runs after the tests;
// the subtests' split update of a counter does.
func TestRecordCleanups(t *testing.T) {
	want := []string{"filtered R-W-W shared cleanup_test.go:62:rd cleanup_test.go:65:wr cleanup_test.go:65:wr"}
	check := func(t *testing.T, tr *trace.Trace) {
		t.Helper()
		if err := trace.Validate(tr); err != nil {
			t.Fatal(err)
		}
		if got := findings(tr); !slices.Equal(got, want) {
			t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	withBothRecorders(t, "cleanups", check)
}

// withBothRecorders records the tests of testdata/record/name with each
// recorder, in a subtest of its own, and has check look at the trace; the
// run must end normally, and every file of the package be rewritten.
func withBothRecorders(t *testing.T, name string, check func(*testing.T, *trace.Trace), checkRewriting ...func(*testing.T, *Instrumented)) {
	t.Run("delve", func(t *testing.T) {
		plan, bin := prepare(t, name, false)
		tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
			t.Fatalf("outcome %+v", oc)
		}
		check(t, tr)
	})
	t.Run("instrument", func(t *testing.T) {
		in, bin, root := prepareInstrumented(t, name, false)
		if len(in.Unrewritten) > 0 {
			t.Errorf("files not rewritten: %v", in.Unrewritten)
		}
		for _, c := range checkRewriting {
			c(t, in)
		}
		check(t, recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root}))
	})
}
