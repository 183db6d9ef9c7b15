package record

import (
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/proc"
)

// The testing package runs each test, top-level or subtest, in a
// goroutine of its own that T.Run starts and then waits for: the
// goroutine signals its parent when the test function returns, or
// earlier when it calls t.Parallel, and a parallel test goes on only
// once its parent's function has returned. None of that is in the
// packages under test, so the Delve recorder probes the testing
// package's own lines for it, and records it as WaitGroup operations of
// objects that no program address can be:
//
//   - T.Run's go statement (hookTestFork): the parent forks the test's
//     goroutine, and adds one to the run's object;
//   - the test's signal to its parent (hookTestSignal, in tRunner and in
//     Parallel): a Done of the run's object, once;
//   - T.Run's return (hookTestJoin): the parent waits for the run's
//     object, so it goes on after what the test did before it signalled;
//   - the closing of a test's barrier (hookTestBarrier, in tRunner, once
//     its function has returned): an Add and a Done of the test's
//     barrier object;
//   - a parallel test going on past its parent's barrier (hookTestResume,
//     in Parallel): a wait for the parent's barrier object;
//   - a top-level parallel test's end (hookTestSignal, once it signalled
//     in Parallel): an Add and a Done of testsEndObj, which the tests'
//     root, on the goroutine that called m.Run, waits for at its own
//     signal (hookTestSignal), once it waited for its parallel tests;
//   - a parallel subtest's end (hookTestSignal, once it signalled in
//     Parallel): an Add and a Done of its parent's testSubsObjs object,
//     which the parent waits for before it runs its cleanups
//     (hookTestCleanup).
//
// So a test happens after what its parent did before T.Run, its parent
// goes on after it (up to its t.Parallel call), and tests that run one
// after another are ordered; parallel tests stay unordered among
// themselves, as they run. The top-level tests are run by T.Run on the
// goroutine that called m.Run, so they happen after what TestMain did
// before the call, and TestMain goes on after all of them, parallel
// ones included, and may read what they wrote. A test's cleanups run
// after its parallel subtests, and before its signal: what they restore
// happens before the next test. The instrumenting recorder records the
// same order from probes placed in the tests' source (instrument.go) and
// cleanups it registers (avrt.TestCleanups, TestEnd).

// testOrderHooks are the testing package's lines the Delve recorder
// probes for the tests' order.
var testOrderHooks = []hook{
	{"testing.(*T).Run", "go tRunner(t, f)", hookTestFork},
	{"testing.(*T).Run", "return !t.failed", hookTestJoin},
	{"testing.tRunner", "t.signal <- signal", hookTestSignal},
	{"testing.(*T).Parallel", "t.signal <- true", hookTestSignal},
	{"testing.tRunner", "close(t.barrier)", hookTestBarrier},
	{"testing.(*T).Parallel", "t.tstate.waitParallel()", hookTestResume},
	{"testing.tRunner", "err := t.runCleanup(recoverAndReturnPanic)", hookTestCleanup},
}

// Test-order object ids: a run's, numbered from 1, and a test's barrier,
// by its goroutine. The high bit is set on no address a program has.
// The ends of a test's parallel subtests, which its cleanups wait for,
// are an object by the test's goroutine too.
const (
	testRunObjs     trace.ObjID = 1<<63 | 0x7e57<<32
	testBarrierObjs trace.ObjID = 1<<63 | 0x7e58<<32
	testSubsObjs    trace.ObjID = 1<<63 | 0x7e5a<<32
)

// isTestOrderObj reports whether obj is one of the objects that stand
// for the tests' order.
func isTestOrderObj(obj trace.ObjID) bool {
	switch obj >> 32 {
	case testRunObjs >> 32, testBarrierObjs >> 32, testSubsObjs >> 32:
		return true
	}
	return obj == testsObj || obj == testsEndObj
}

// testState is what the recorder knows of a goroutine that runs a test.
type testState struct {
	runs      []trace.ObjID // the T.Run calls it is in, innermost last
	run       trace.ObjID   // the run that started it, 0 if none
	parent    trace.GoID    // the goroutine that called T.Run
	signalled bool          // its Done of run is recorded
	barrier   trace.ObjID   // its barrier, once it was closed
	// parallelKids says a subtest of it called t.Parallel: the
	// instrumenting recorder opens its barrier when it returns (the
	// Delve recorder sees the testing package do it).
	parallelKids bool
}

// testHook records a stop at one of testOrderHooks.
func (r *recorder) testHook(g *proc.G, frames []proc.Stackframe, hook hookKind) {
	gs := r.goroutine(trace.GoID(g.ID), g)
	if gs == nil {
		return
	}
	r.flushPending(gs)
	r.flushAfter(gs, frames, min(1, len(frames)-1), true)
	// A test's own events are at the testing package's lines; its
	// parent's, at the call of T.Run.
	at := 0
	if (hook == hookTestFork || hook == hookTestJoin) && len(frames) > 1 {
		at = 1
	}
	f := frames[at].Call
	site := r.site(Line{f.File, f.Line}, 0, fnName(f.Fn))
	switch hook {
	case hookTestFork:
		r.testRuns++
		obj := testRunObjs | trace.ObjID(r.testRuns)
		r.t.Objects[obj] = trace.Object{Kind: trace.ObjWaitGroup, Name: "a test's run"}
		gs.test.runs = append(gs.test.runs, obj)
		fork := frames[0].Call
		r.forks = append(r.forks, pendingFork{parent: gs.id, site: Line{fork.File, fork.Line}, siteID: site, run: obj})
	case hookTestJoin:
		n := len(gs.test.runs)
		if n == 0 {
			return
		}
		obj := gs.test.runs[n-1]
		gs.test.runs = gs.test.runs[:n-1]
		if r.testAdded[obj] {
			r.emitIn(gs, trace.Event{Kind: trace.KindWGWait, Obj: obj, Site: site}, false)
		}
	case hookTestSignal:
		if gs.test.run == 0 {
			// The tests' root, which waited for its parallel tests.
			if _, ok := r.t.Objects[testsEndObj]; ok {
				r.emitIn(gs, trace.Event{Kind: trace.KindWGWait, Obj: testsEndObj, Site: site}, false)
			}
			return
		}
		if gs.test.signalled {
			p := r.gs[gs.test.parent]
			switch {
			case p == nil:
			case p.test.run == 0:
				// A top-level parallel test's end, which the root waits for.
				r.t.Objects[testsEndObj] = trace.Object{Kind: trace.ObjWaitGroup, Name: "the tests m.Run waits for"}
				r.emitIn(gs, trace.Event{Kind: trace.KindWGAdd, Arg: 1, Obj: testsEndObj, Site: site}, false)
				r.emitIn(gs, trace.Event{Kind: trace.KindWGDone, Obj: testsEndObj, Site: site}, false)
			default:
				// A parallel subtest's end, which its parent's cleanups
				// wait for (hookTestCleanup).
				obj := testSubsObjs | trace.ObjID(p.id)
				r.t.Objects[obj] = trace.Object{Kind: trace.ObjWaitGroup, Name: "a test's parallel subtests' end"}
				r.emitIn(gs, trace.Event{Kind: trace.KindWGAdd, Arg: 1, Obj: obj, Site: site}, false)
				r.emitIn(gs, trace.Event{Kind: trace.KindWGDone, Obj: obj, Site: site}, false)
			}
			return
		}
		if len(frames) > 0 && frames[0].Call.Fn != nil && frames[0].Call.Fn.Name != "testing.(*T).Parallel" {
			// The test's function has returned.
			r.endRegions(gs, 0)
		}
		r.emitIn(gs, trace.Event{Kind: trace.KindWGDone, Obj: gs.test.run, Site: site}, false)
		gs.test.signalled = true
	case hookTestBarrier:
		if gs.test.barrier != 0 {
			return
		}
		obj := testBarrierObjs | trace.ObjID(gs.id)
		r.t.Objects[obj] = trace.Object{Kind: trace.ObjWaitGroup, Name: "a test's parallel subtests' start"}
		gs.test.barrier = obj
		r.emitIn(gs, trace.Event{Kind: trace.KindWGAdd, Arg: 1, Obj: obj, Site: site}, false)
		r.emitIn(gs, trace.Event{Kind: trace.KindWGDone, Obj: obj, Site: site}, false)
	case hookTestCleanup:
		obj := testSubsObjs | trace.ObjID(gs.id)
		if _, ok := r.t.Objects[obj]; ok {
			r.emitIn(gs, trace.Event{Kind: trace.KindWGWait, Obj: obj, Site: site}, false)
		}
	case hookTestResume:
		p := r.gs[gs.test.parent]
		if gs.test.run == 0 || p == nil || p.test.barrier == 0 {
			return
		}
		r.emitIn(gs, trace.Event{Kind: trace.KindWGWait, Obj: p.test.barrier, Site: site}, false)
	}
}

// testFork records, as the parent's events, the start of a test's
// goroutine gs by T.Run: an Add of the run's object, which the test's
// signal is the Done of.
func (r *recorder) testFork(gs *gstate, f pendingFork) {
	gs.test.run, gs.test.parent = f.run, f.parent
	r.testAdded[f.run] = true
	r.emitIn(r.gs[f.parent], trace.Event{Kind: trace.KindWGAdd, Arg: 1, Obj: f.run, Site: f.siteID}, false)
}
