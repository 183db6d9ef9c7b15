package replay

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/record"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/children"
)

// build plans and builds a test package of the module as the recorder
// does, and returns the plan and the binary.
func build(t *testing.T, pkg string) (*record.Plan, string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := record.MakePlan(record.PlanOptions{Dir: root, Pattern: pkg})
	if err != nil {
		t.Fatal(err)
	}
	bin, cleanup, err := record.Build(context.Background(), root, pkg, false, plan)
	t.Cleanup(cleanup)
	if err != nil {
		t.Fatal(err)
	}
	return plan, bin
}

// splitWitness is the lost update of a counter whose Inc (at lines
// lock, lock+1, ... of file) reads under one critical section and writes
// under another, run by the first two goroutines of the go statement at
// goFile:goLine: both read, then both write.
func splitWitness(file string, lock int, goFile string, goLine int, expr string) *Witness {
	w := &Witness{Goroutines: []Goroutine{
		{File: goFile, Line: goLine, Index: 0},
		{File: goFile, Line: goLine, Index: 1},
	}}
	step := func(g, line int, k trace.Kind, expr string, obj trace.ObjID) {
		w.Steps = append(w.Steps, Step{G: g, File: file, Line: line, Kind: k, Expr: expr, Obj: obj})
	}
	for g := range 2 {
		step(g, lock, trace.KindAcquire, "", 0)
		step(g, lock+1, trace.KindRead, expr, 1)
		step(g, lock+2, trace.KindRelease, "", 0)
	}
	for g := range 2 {
		step(g, lock+3, trace.KindAcquire, "", 0)
		step(g, lock+4, trace.KindWrite, expr, 1)
		step(g, lock+5, trace.KindRelease, "", 0)
	}
	return w
}

func replay(t *testing.T, bin string, w *Witness) Result {
	t.Helper()
	res, err := Replay(context.Background(), w, Options{Binary: bin, Args: []string{"-test.run", "^TestInc$"}, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !children.Gone(res.PID) {
		t.Errorf("process %d is still there", res.PID)
	}
	return res
}

func values(vs []Value) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintln(&b, v)
	}
	return b.String()
}

// TestLostUpdate forces the witness of testdata/record/counter's lost
// update: both goroutines read 0 and write 1, so the count ends at 1
// after two increments.
func TestLostUpdate(t *testing.T) {
	root, _ := filepath.Abs("../..")
	dir := filepath.Join(root, "testdata/record/counter")
	_, bin := build(t, "./testdata/record/counter")
	w := splitWitness(filepath.Join(dir, "counter.go"), 15, filepath.Join(dir, "counter_test.go"), 15, "c.n")
	res := replay(t, bin, w)
	if !res.Enforced {
		t.Fatalf("not enforced: %s\n%s", res.Reason, res.Output)
	}
	want := "step 1 read c.n = 0\nstep 4 read c.n = 0\nstep 7 wrote c.n = 1\nstep 10 wrote c.n = 1\n"
	if got := values(res.Values); got != want {
		t.Errorf("values:\n%s\nwant:\n%s", got, want)
	}
	if !res.Complete || res.Status != 0 {
		t.Errorf("the program did not end normally: complete %v, status %d\n%s", res.Complete, res.Status, res.Output)
	}
}

// TestInfeasible replays witnesses that the program cannot follow: the
// second goroutine acquiring the lock while the first, held at its read,
// still holds it; and the lost update of testdata/corpus/splitcounter,
// whose turn scheduler starts the second goroutine's body only once the
// first has returned, an order through pipes that the witness does not
// know.
func TestInfeasible(t *testing.T) {
	root, _ := filepath.Abs("../..")
	t.Run("lock", func(t *testing.T) {
		dir := filepath.Join(root, "testdata/record/counter")
		_, bin := build(t, "./testdata/record/counter")
		w := splitWitness(filepath.Join(dir, "counter.go"), 15, filepath.Join(dir, "counter_test.go"), 15, "c.n")
		// The second goroutine's first acquire moves before the first's
		// read and release.
		w.Steps[1], w.Steps[2], w.Steps[3] = w.Steps[3], w.Steps[1], w.Steps[2]
		res := replay(t, bin, w)
		want := "every goroutine is held or blocked before step 1 (counter.go:15 acq, goroutine #2 of the go statement at counter_test.go:15); it is blocked at counter.go:15 in github.com/avcheck/avcheck/testdata/record/counter.(*Counter).Inc"
		if res.Enforced || res.Reason != want || res.Steps != 1 {
			t.Errorf("enforced %v after %d steps, reason %q; want not enforced after 1, reason %q", res.Enforced, res.Steps, res.Reason, want)
		}
	})
	t.Run("turn", func(t *testing.T) {
		dir := filepath.Join(root, "testdata/corpus/splitcounter")
		_, bin := build(t, "./testdata/corpus/splitcounter")
		w := splitWitness(filepath.Join(dir, "counter.go"), 19, filepath.Join(root, "testdata/corpus/internal/turn/turn.go"), 47, "c.n")
		res := replay(t, bin, w)
		want := "the program orders its goroutines itself, through I/O that the trace does not record: goroutine #2 of the go statement at turn.go:47, whose step comes next, waits for I/O at turn.go:107 in github.com/avcheck/avcheck/testdata/corpus/internal/turn.await"
		if res.Enforced || res.Reason != want || res.Steps != 3 {
			t.Errorf("enforced %v after %d steps, reason %q; want not enforced after 3, reason %q", res.Enforced, res.Steps, res.Reason, want)
		}
	})
}

// TestFromRecording records testdata/record/counter, predicts, and
// replays the witness of its lost update as the predictor built it: every
// read of the witness reads 0 and every write writes 1, so two
// increments leave the count at 1. The process is gone afterwards.
func TestFromRecording(t *testing.T) {
	plan, bin := build(t, "./testdata/record/counter")
	args := []string{"-test.run", "^TestInc$"}
	tr, _, err := record.Record(context.Background(), plan, record.Options{Binary: bin, Args: args})
	if errors.Is(err, record.ErrPtrace) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var found *predict.Finding
	res := predict.Predict(tr, predict.Options{Precise: true})
	for _, f := range res.Reported() {
		if f.Level == predict.LevelProven && f.Pattern == "R-W-W" && f.Var == "c.n" {
			found = &f
			break
		}
	}
	if found == nil {
		t.Fatalf("no proven R-W-W on c.n among %d findings", len(res.Findings))
	}
	w, err := FromTrace(tr, *found, plan)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Replay(context.Background(), w, Options{Binary: bin, Args: args, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Enforced {
		t.Fatalf("not enforced: %s", r.Reason)
	}
	writes := 0
	for _, v := range r.Values {
		want := "0"
		if v.Write {
			want = "1"
			writes++
		}
		if v.Expr != "c.n" || v.Value != want {
			t.Errorf("%s, want %s", v, want)
		}
	}
	if writes < 2 {
		t.Errorf("%d writes observed, want both increments':\n%s", writes, values(r.Values))
	}
	if !children.Gone(r.PID) {
		t.Errorf("process %d is still there", r.PID)
	}
}

// TestCorpus records corpus programs, predicts, and replays each proven
// finding's witness as the predictor built it. The corpus's turn
// scheduler (testdata/corpus/internal/turn) orders goroutines through
// pipes, which no witness knows of, so its programs' witnesses cannot be
// followed. A race is shown when the goroutines of its two accesses
// stand at them at once, one inside one line of its goroutine included
// (escrange's read of it.Name comes in the middle of its line). The
// programs are those whose recordings give the same findings every time
// (ctorworker, without the scheduler, gives its race as R-W or W-R).
func TestCorpus(t *testing.T) {
	root, _ := filepath.Abs("../..")
	for _, c := range []struct {
		pkg, test string
		// want matches the replays' outcomes, one line each.
		want string
	}{
		// queuedjob runs without the turn scheduler: how many steps its
		// witness has depends on the order the recorded run took (2 to 4
		// have been seen).
		{"queuedjob", "TestSubmit", `race W-W j\.state: met after \d+ steps, where it held "new"\n`},
		{"escrange", "TestNotify", regexp.QuoteMeta(`race W-R it.Name: met after 0 steps, where it held "a"`) + "\n"},
		{"splitcounter", "TestInc", regexp.QuoteMeta("atomicity R-W-W c.n: the program orders its goroutines itself, through I/O that the trace does not record: test run #1, whose step comes next, waits for I/O at turn.go:107 in github.com/avcheck/avcheck/testdata/corpus/internal/turn.await\n")},
	} {
		t.Run(c.pkg, func(t *testing.T) {
			pkg := "./testdata/corpus/" + c.pkg
			plan, bin := build(t, pkg)
			args := []string{"-test.run", "^" + c.test + "$"}
			dir := filepath.Join(root, pkg)
			tr, _, err := record.Record(context.Background(), plan, record.Options{Binary: bin, Args: args, Dir: dir})
			if errors.Is(err, record.ErrPtrace) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, f := range predict.Predict(tr, predict.Options{Precise: true}).Reported() {
				if f.Level < predict.LevelProven {
					continue
				}
				w, err := FromTrace(tr, f, plan)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Replay(context.Background(), w, Options{Binary: bin, Args: args, Dir: dir, Timeout: 2 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				// A witness refused before the program starts (a race
				// inside one line) has no process.
				if (r.Enforced || r.PID != 0) && !children.Gone(r.PID) {
					t.Errorf("process %d is still there", r.PID)
				}
				if r.Meeting != nil {
					fmt.Fprintf(&got, "%s %s %s: met after %d steps, where it held %s\n", f.Kind, f.Pattern, f.Var, r.Steps, r.Meeting.Value)
				} else if r.Enforced {
					fmt.Fprintf(&got, "%s %s %s: enforced, %d steps\n", f.Kind, f.Pattern, f.Var, r.Steps)
				} else {
					fmt.Fprintf(&got, "%s %s %s: %s\n", f.Kind, f.Pattern, f.Var, r.Reason)
				}
			}
			if !regexp.MustCompile(`^` + c.want + `$`).MatchString(got.String()) {
				t.Errorf("got:\n%s\nwant:\n%s", got.String(), c.want)
			}
		})
	}
}

// A race's witness is forced up to the first step its two goroutines
// make on the arrivals at their accesses' lines; the two then meet
// there. A lock on an access's line before the access keeps the witness
// forced as a whole.
func TestMeeting(t *testing.T) {
	st := func(g, line int, k trace.Kind) Step { return Step{G: g, File: "/p/c.go", Line: line, Kind: k} }
	for _, tc := range []struct {
		name    string
		w       Witness
		cut     int
		targets []meetAt
		ok      bool
	}{
		{"back to back", Witness{Steps: []Step{st(0, 5, trace.KindAcquire), st(1, 9, trace.KindRead), st(0, 6, trace.KindWrite)}, Pair: []int{2, 1}},
			1, []meetAt{{g: 0, at: line{"/p/c.go", 6}, visit: 1, step: 2}, {g: 1, at: line{"/p/c.go", 9}, visit: 1, step: 1}}, true},
		// t.pending++ against another goroutine's write: the read and
		// the write of one arrival, the other goroutine's step between.
		{"inside one line", Witness{Steps: []Step{st(1, 3, trace.KindRelease), st(0, 7, trace.KindRead), st(1, 9, trace.KindWrite), st(0, 7, trace.KindWrite)}, Pair: []int{2, 3}},
			1, []meetAt{{g: 1, at: line{"/p/c.go", 9}, visit: 1, step: 2}, {g: 0, at: line{"/p/c.go", 7}, visit: 1, step: 3}}, true},
		{"lock before the access on its line", Witness{Steps: []Step{st(0, 7, trace.KindAcquire), st(0, 7, trace.KindWrite), st(1, 9, trace.KindRead)}, Pair: []int{1, 2}},
			0, nil, false},
		{"not a race", Witness{Steps: []Step{st(0, 7, trace.KindRead), st(1, 9, trace.KindWrite)}}, 0, nil, false},
	} {
		targets, cut, ok := meeting(&tc.w)
		if ok != tc.ok || cut != tc.cut || fmt.Sprint(targets) != fmt.Sprint(tc.targets) {
			t.Errorf("%s: meeting %v at %d (%v), want %v at %d (%v)", tc.name, targets, cut, ok, tc.targets, tc.cut, tc.ok)
		}
	}
}
