package record

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/children"
)

// prepare plans and builds one of testdata/record's programs.
func prepare(tb testing.TB, name string, isMain bool) (*Plan, string) {
	tb.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		tb.Fatal(err)
	}
	pkg := "./testdata/record/" + name
	plan, err := MakePlan(PlanOptions{Dir: root, Pattern: pkg})
	if err != nil {
		tb.Fatal(err)
	}
	bin, cleanup, err := Build(context.Background(), root, pkg, isMain, plan)
	tb.Cleanup(cleanup)
	if err != nil {
		tb.Fatal(err)
	}
	return plan, bin
}

func record(tb testing.TB, ctx context.Context, plan *Plan, opts Options) (*trace.Trace, Outcome) {
	tb.Helper()
	t, oc, err := Record(ctx, plan, opts)
	if errors.Is(err, ErrPtrace) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return t, oc
}

// A program that never ends is stopped when the context is cancelled (as
// Ctrl-C does), the child is killed, and the trace so far is valid and
// ends at the last event the program made: the stop the interruption
// asks for records nothing (taken as a probe's, it now and then recorded
// a release of a lock not held, or an acquire of one held). Interrupted
// at a few moments, the program busy with its lock each time.
func TestRecordInterrupted(t *testing.T) {
	plan, bin := prepare(t, "forever", true)
	for i, after := range []time.Duration{600, 800, 1000, 1200, 1400} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(after*time.Millisecond, cancel)
		tr, oc := record(t, ctx, plan, Options{Binary: bin})
		cancel()
		if oc.Complete || !strings.HasPrefix(oc.Message, "interrupted") || oc.Invalid != "" {
			t.Errorf("run %d: outcome %+v, want an interruption and no invalid event", i, oc)
		}
		if len(tr.Events) == 0 {
			t.Errorf("run %d: no events recorded", i)
		}
		if err := trace.Validate(tr); err != nil {
			t.Errorf("run %d: trace: %v", i, err)
		}
		if !children.Gone(oc.PID) {
			t.Errorf("run %d: process %d is still there", i, oc.PID)
		}
	}
}

// The recorded loop program has every event the plan asks for: 2
// goroutines x N increments x (2 acquires, 2 releases, a read and a write
// of c.n). main's wg.Wait is not recorded: a Wait is recorded at the
// goroutine's next stop, and main has none before the program exits.
func TestRecordLoop(t *testing.T) {
	plan, bin := prepare(t, "loop", true)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin, Args: []string{"5"}})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" || oc.Unevaluated != 0 {
		t.Fatalf("outcome %+v", oc)
	}
	count := map[trace.Kind]int{}
	for _, e := range tr.Events {
		if e.Kind.IsAccess() && tr.Object(e.Obj).Name != "c.n" {
			continue // the closure's reads of the captured c and times
		}
		count[e.Kind]++
	}
	for k, want := range map[trace.Kind]int{
		trace.KindAcquire: 20, trace.KindRelease: 20, trace.KindRead: 10, trace.KindWrite: 10,
		trace.KindWGAdd: 2, trace.KindWGDone: 2, trace.KindWGWait: 0,
	} {
		if count[k] != want {
			t.Errorf("%d %s events, want %d", count[k], k, want)
		}
	}
	// A worker's end may come after main has returned, which ends the
	// program first.
	if count[trace.KindEnd] < 1 || count[trace.KindEnd] > 2 {
		t.Errorf("%d end events, want 1 or 2", count[trace.KindEnd])
	}
	// Each call of inc is one instance of its region, although the calls
	// come from one loop whose own region encloses them: a loop's next
	// iteration ends the instance.
	type inst struct {
		g    trace.GoID
		r    trace.RegionID
		inst uint64
	}
	perInst := map[inst][]trace.Kind{}
	for _, e := range tr.Events {
		if e.Kind.IsAccess() && tr.Object(e.Obj).Name == "c.n" {
			k := inst{e.G, e.Region, e.Inst}
			perInst[k] = append(perInst[k], e.Kind)
		}
	}
	if len(perInst) != 10 {
		t.Errorf("c.n is accessed in %d region instances, want 10", len(perInst))
	}
	for k, kinds := range perInst {
		if k.r == 0 || len(kinds) != 2 || kinds[0] != trace.KindRead || kinds[1] != trace.KindWrite {
			t.Errorf("region instance %+v has c.n accesses %v, want rd wr", k, kinds)
		}
	}
	if !children.Gone(oc.PID) {
		t.Errorf("process %d is still there", oc.PID)
	}
}

// BenchmarkRecord measures recording speed: events recorded per second of
// a run of the loop program under the recorder (launch included), and
// the slowdown against running the same program, optimised, without it.
func BenchmarkRecord(b *testing.B) { benchRecord(b, "loop", "200") }

// BenchmarkRecordChannels is BenchmarkRecord on a program that spends
// its events on channels: two goroutines pass a ball back and forth.
func BenchmarkRecordChannels(b *testing.B) { benchRecord(b, "pingpong", "100") }

func benchRecord(b *testing.B, name, arg string) {
	plan, bin := prepare(b, name, true)
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	plain := filepath.Join(b.TempDir(), name)
	build := exec.Command("go", "build", "-o", plain, "./testdata/record/"+name)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", name, err, out)
	}
	events, stops := 0, 0
	var recording, running time.Duration
	for b.Loop() {
		start := time.Now()
		tr, oc := record(b, context.Background(), plan, Options{Binary: bin, Args: []string{arg}})
		recording += time.Since(start)
		if !oc.Complete || oc.Status != 0 {
			b.Fatalf("outcome %+v", oc)
		}
		events += len(tr.Events)
		stops += oc.Stops
		start = time.Now()
		cmd := exec.Command(plain, arg)
		cmd.Dir = root
		if err := cmd.Run(); err != nil {
			b.Fatalf("running %s: %v", name, err)
		}
		running += time.Since(start)
	}
	b.ReportMetric(float64(events)/recording.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(stops), "events/stop")
	b.ReportMetric(recording.Seconds()/running.Seconds(), "slowdown")
}

// The binary is named as the go command names it: PKG.test for a test,
// the command's name for a program; the temporary directory holding it is
// gone after cleanup.
func TestBuildName(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pkg    string
		isMain bool
		want   string
	}{
		{"./testdata/record/counter", false, "counter.test"},
		{"./testdata/record/loop", true, "loop"},
	} {
		bin, cleanup, err := Build(context.Background(), root, tc.pkg, tc.isMain, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := filepath.Base(bin); got != tc.want {
			t.Errorf("%s: binary %s, want %s", tc.pkg, got, tc.want)
		}
		cleanup()
		if _, err := os.Stat(filepath.Dir(bin)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %s is still there after cleanup (%v)", tc.pkg, filepath.Dir(bin), err)
		}
	}
}
