package record

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/children"
)

// These tests record the programs of testdata/record that synchronise
// with channels, Cond, Once and sync/atomic, and check three things: the
// synchronisation events each goroutine recorded, in its program order
// (the interleaving of goroutines varies from run to run, each one's own
// order does not); that the trace validates; and what avcheck run
// predicts from it, which for all of them is nothing, because the
// synchronisation orders the two halves of each split update, while the
// same trace without its synchronisation events predicts a violation.

// syncKinds are the events the tests list; accesses, locks and regions
// are covered by the other tests.
var syncKinds = map[trace.Kind]bool{
	trace.KindSend: true, trace.KindRecv: true, trace.KindClose: true,
	trace.KindCondWait: true, trace.KindCondSignal: true, trace.KindCondBroadcast: true,
	trace.KindOnceDo:     true,
	trace.KindAtomicLoad: true, trace.KindAtomicStore: true, trace.KindAtomicRMW: true,
}

// syncEvents lists each goroutine's synchronisation events as
// "kind object[#arg] file:line", joined by "; ", one string per goroutine
// that has any, sorted. Repeated atomic loads of a spin loop count as one.
func syncEvents(tr *trace.Trace) []string {
	per := map[trace.GoID][]string{}
	var order []trace.GoID
	for _, e := range tr.Events {
		if !syncKinds[e.Kind] {
			continue
		}
		s := tr.Site(e.Site)
		o := tr.Object(e.Obj)
		// Channels, Conds and Onces are named by the line of their first
		// recorded operation, which can vary.
		name := o.Name
		switch o.Kind {
		case trace.ObjChan:
			name = fmt.Sprintf("chan/%d", o.Cap)
		case trace.ObjCond:
			name = "cond"
		case trace.ObjOnce:
			name = "once"
		}
		text := fmt.Sprintf("%s %s", e.Kind, name)
		switch e.Kind {
		case trace.KindSend, trace.KindRecv, trace.KindOnceDo:
			text += fmt.Sprintf("#%d", e.Arg)
		}
		text += fmt.Sprintf(" %s:%d", filepath.Base(s.File), s.Line)
		if _, ok := per[e.G]; !ok {
			order = append(order, e.G)
		}
		if l := per[e.G]; len(l) > 0 && l[len(l)-1] == text && e.Kind == trace.KindAtomicLoad {
			continue
		}
		per[e.G] = append(per[e.G], text)
	}
	var out []string
	for _, g := range order {
		out = append(out, strings.Join(per[g], "; "))
	}
	slices.Sort(out)
	return out
}

// withoutSync returns the trace without the events that syncEvents lists:
// what the recorder recorded before it knew channels, Cond, Once and
// atomics.
func withoutSync(tr *trace.Trace) *trace.Trace {
	out := &trace.Trace{Sites: tr.Sites, Objects: tr.Objects}
	for _, e := range tr.Events {
		if !syncKinds[e.Kind] {
			e.Seq = uint64(len(out.Events))
			out.Events = append(out.Events, e)
		}
	}
	return out
}

func findings(tr *trace.Trace) []string {
	var out []string
	for _, f := range predict.Predict(tr, predict.Options{}).Findings {
		s := fmt.Sprintf("%s %s %s", f.Level, f.Pattern, f.Var)
		for _, a := range f.Accesses {
			site := tr.Site(a.Site)
			s += fmt.Sprintf(" %s:%d:%s", filepath.Base(site.File), site.Line, a.Op)
		}
		out = append(out, s)
	}
	return out
}

// checkOrdered fails t unless tr is a valid trace whose synchronisation
// events (syncEvents) are want, from which nothing is predicted, and
// from which, without those events, something is: they are what rules
// the violation out.
func checkOrdered(t *testing.T, tr *trace.Trace, want []string) {
	t.Helper()
	if err := trace.Validate(tr); err != nil {
		t.Fatalf("trace: %v", err)
	}
	if got := syncEvents(tr); !slices.Equal(got, want) {
		t.Errorf("synchronisation events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := findings(tr); len(got) != 0 {
		t.Errorf("findings:\n%s\nwant none", strings.Join(got, "\n"))
	}
	if len(findings(withoutSync(tr))) == 0 {
		t.Errorf("without its synchronisation events the trace predicts nothing either: they are not what rules the violation out")
	}
}

func TestRecordSync(t *testing.T) {
	only := os.Getenv("AVCHECK_RECORD_ONLY") // one program, when working on it
	for _, tc := range []struct {
		name string
		// events: see syncEvents; chan/N is a channel of capacity N.
		events []string
	}{
		{"chantoken", []string{
			"recv chan/0#1 token_test.go:14",
			"send chan/0#1 token_test.go:12",
		}},
		{"chanbuffered", []string{
			"recv chan/2#1 buffered_test.go:21; recv chan/2#2 buffered_test.go:21; recv chan/2#3 buffered_test.go:21; recv chan/0#0 buffered_test.go:23",
			"send chan/2#1 buffered_test.go:13; send chan/2#2 buffered_test.go:13; send chan/2#3 buffered_test.go:13; close chan/0 buffered_test.go:16",
		}},
		{"chanselect", []string{
			"recv chan/0#1 selects_test.go:14; send chan/1#1 selects_test.go:20",
			"send chan/0#1 selects_test.go:25; recv chan/1#1 selects_test.go:29",
		}},
		{"chanclose", []string{
			"recv chan/4#1 closing_test.go:17; recv chan/4#2 closing_test.go:17; recv chan/4#0 closing_test.go:17",
			"send chan/4#1 closing_test.go:11; send chan/4#2 closing_test.go:12; close chan/4 closing_test.go:14",
		}},
		{"condwait", []string{
			"csignal cond cond.go:56",
			"cwait cond cond.go:63",
		}},
		{"oncelazy", []string{
			"once once#0 once.go:39",
			"once once#1 once.go:39",
		}},
		{"atomics", []string{
			"aload s.ready atomics.go:30; aload s.hits atomics.go:39; aload s.calls atomics.go:39",
			"armw s.hits atomics.go:17; armw s.calls atomics.go:18",
			"armw s.hits atomics.go:17; armw s.calls atomics.go:18",
			"astore s.ready atomics.go:25",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if only != "" && only != tc.name {
				t.Skip("AVCHECK_RECORD_ONLY is " + only)
			}
			plan, bin := prepare(t, tc.name, false)
			tr, oc := record(t, context.Background(), plan, Options{Binary: bin, Args: []string{"-test.v"}})
			if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
				t.Fatalf("outcome %+v", oc)
			}
			checkOrdered(t, tr, tc.events)
			if !children.Gone(oc.PID) {
				t.Errorf("process %d is still there", oc.PID)
			}
		})
	}
}

// Channel operations made through the reflect package (reflect.Select,
// reflect.Value's Send, Recv, TryRecv and Close) order goroutines as the
// statements do (testdata/record/reflectsel): both recorders record
// them, the Delve recorder in the runtime, the instrumenting one at the
// calls (avrt.Select), and neither trace predicts a violation, while
// each does without them.
func TestRecordReflect(t *testing.T) {
	want := []string{
		"recv chan/0#1 reflectsel.go:31; send chan/0#1 reflectsel.go:37",
		"recv chan/0#1 reflectsel_test.go:34; send chan/1#1 reflectsel_test.go:36; recv chan/0#0 reflectsel_test.go:38",
		"send chan/0#1 reflectsel.go:42; recv chan/0#1 reflectsel_test.go:14",
		"send chan/0#1 reflectsel_test.go:29; recv chan/1#1 reflectsel_test.go:30; close chan/0 reflectsel_test.go:32",
	}
	withBothRecorders(t, "reflectsel", func(t *testing.T, tr *trace.Trace) { checkOrdered(t, tr, want) })
}

// A program without select statements has channels recorded too, and
// its message numbers follow each channel's order.
func TestRecordPingPong(t *testing.T) {
	plan, bin := prepare(t, "pingpong", true)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin, Args: []string{"3"}})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		t.Fatalf("outcome %+v", oc)
	}
	// main's last receive, of the closed pong, is recorded where the
	// runtime returns it, with no later stop of main needed.
	checkOrdered(t, tr, []string{
		"recv chan/0#1 main.go:36; send chan/0#1 main.go:38; recv chan/0#2 main.go:36; send chan/0#2 main.go:38; recv chan/0#3 main.go:36; send chan/0#3 main.go:38; recv chan/0#0 main.go:36; close chan/0 main.go:40",
		"send chan/0#1 main.go:43; recv chan/0#1 main.go:44; send chan/0#2 main.go:43; recv chan/0#2 main.go:44; send chan/0#3 main.go:43; recv chan/0#3 main.go:44; close chan/0 main.go:47; recv chan/0#0 main.go:48",
	})
}

// A channel or Once that the runtime places where a collected one was is
// a new object: its close and its Do are its own, not a second close or
// a second run of the old one's (which would make the trace invalid).
func TestRecordReuse(t *testing.T) {
	plan, bin := prepare(t, "reuse", true)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin, Args: []string{"4"}})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		t.Fatalf("outcome %+v", oc)
	}
	if err := trace.Validate(tr); err != nil {
		t.Fatalf("trace: %v", err)
	}
	count := map[string]int{}
	objs := map[trace.ObjID]bool{}
	for _, e := range tr.Events {
		switch {
		case e.Kind == trace.KindClose, e.Kind == trace.KindOnceDo && e.Arg == 1:
			count[e.Kind.String()]++
			objs[e.Obj] = true
			if tr.Object(e.Obj).Name == "" {
				t.Errorf("%v: object %#x is not declared", e, e.Obj)
			}
		}
	}
	// Four rounds, each with its channel, its Once and its context.
	if count["close"] != 8 || count["once"] != 4 {
		t.Errorf("%d closes and %d Do running the function, want 8 and 4", count["close"], count["once"])
	}
	if len(objs) != 12 {
		t.Errorf("%d objects closed or run, want 12", len(objs))
	}
}

// WaitGroup.Go's task is forked by its caller, and its Done, made by the
// sync package after the task returns, is recorded: the reset after Wait
// is ordered after the task's update.
func TestRecordWaitGroupGo(t *testing.T) {
	plan, bin := prepare(t, "wggo", false)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		t.Fatalf("outcome %+v", oc)
	}
	if err := trace.Validate(tr); err != nil {
		t.Fatalf("trace: %v", err)
	}
	var got []string
	forker := map[trace.GoID]trace.GoID{}
	for _, e := range tr.Events {
		switch e.Kind {
		case trace.KindFork:
			forker[trace.GoID(e.Arg)] = e.G
		case trace.KindWGAdd, trace.KindWGDone, trace.KindWGWait:
			if isTestOrderObj(e.Obj) {
				continue
			}
			s := tr.Site(e.Site)
			got = append(got, fmt.Sprintf("%s %s:%d", e.Kind, filepath.Base(s.File), s.Line))
		}
	}
	want := []string{"wgadd wggo_test.go:13", "wgdone wggo_test.go:13", "wgwait wggo_test.go:16"}
	if !slices.Equal(got, want) {
		t.Errorf("WaitGroup events %q, want %q", got, want)
	}
	for _, e := range tr.Events {
		if e.Kind == trace.KindWGDone && forker[e.G] == rootG {
			t.Errorf("the task g%d is forked by the program, not by the test", e.G)
		}
	}
	if got := findings(tr); len(got) != 0 {
		t.Errorf("findings:\n%s\nwant none", strings.Join(got, "\n"))
	}
	stripped := &trace.Trace{Sites: tr.Sites, Objects: tr.Objects}
	for _, e := range tr.Events {
		if e.Kind != trace.KindWGAdd && e.Kind != trace.KindWGDone && e.Kind != trace.KindWGWait {
			e.Seq = uint64(len(stripped.Events))
			stripped.Events = append(stripped.Events, e)
		}
	}
	if len(findings(stripped)) == 0 {
		t.Errorf("without its WaitGroup events the trace predicts nothing either: they are not what rules the violation out")
	}
}
