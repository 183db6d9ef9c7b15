package record

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
	"golang.org/x/tools/go/ssa"
)

// callsOf builds a package from src and returns, per function, whether
// it may branch, and the calls that count as branches, as "line:callee".
func callsOf(t *testing.T, src string) (mayBranch map[string]bool, calls []string) {
	t.Helper()
	fset, pkg := buildSrc(t, src)
	funcs := srcFuncs(pkg)
	m := newMayBranch(funcs)
	mayBranch = make(map[string]bool)
	for _, fn := range funcs {
		r, known := m.result[funcKey(fn)]
		mayBranch[strings.ReplaceAll(fn.String(), "p.", "")] = !known || r
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if c, ok := instr.(ssa.CallInstruction); ok && m.branchingCall(c) {
					// As a frame of the binary names the callee, if
					// it can.
					name := calleeName(c)
					switch {
					case name != "":
					case c.Common().IsInvoke():
						name = c.Common().Method.Name()
					case c.Common().StaticCallee() != nil:
						name = c.Common().StaticCallee().Name()
					default:
						name = c.Common().Value.Name()
					}
					kind := ""
					switch c.(type) {
					case *ssa.Go:
						kind = "go "
					case *ssa.Defer:
						kind = "defer "
					}
					calls = append(calls, fmt.Sprintf("%d:%s%s", fset.Position(c.Pos()).Line, kind, name))
				}
			}
		}
	}
	slices.Sort(calls)
	return mayBranch, calls
}

const callsSrc = `package p

type A struct {
	bal int
	s   []int
	m   map[int]int
}

type I interface{ M(int) }

func check(v int) {
	if v < 0 {
		panic("overdrawn")
	}
}

func straight(v int) int   { return v * 2 }
func viaStraight(v int) int { return straight(v) + 1 }
func viaCheck(v int)        { check(v) }
func ranged(s []int) int {
	n := 0
	for _, x := range s {
		n += x
	}
	return n
}
func selects(c chan int) {
	select {
	case <-c:
	default:
	}
}
func switches(x any) int {
	switch x.(type) {
	case int:
		return 1
	}
	return 0
}
func rec1(v int) int { return rec2(v) }
func rec2(v int) int {
	if v > 0 {
		return rec1(v - 1)
	}
	return 0
}
func loop1(v int) int     { return loop2(v) }
func loop2(v int) int     { return loop1(v) }
func printer(v int)       { println(v) }
func external(v int)
func (a *A) lock()        { external(0) }
func deref(p *int) {
	if *p > 0 {
		panic("positive")
	}
}

func (a *A) callers(n int, f func(int), i I) {
	b := a.bal
	check(b - n)
	check(n)
	check(1)
	check(-n)
	straight(b)
	viaStraight(b)
	printer(b)
	viaCheck(b)
	f(b)
	f(n)
	i.M(b)
	i.M(n)
	a.lock()
	external(b)
	external(n)
	_ = len(a.s)
	go check(b)
	defer check(b)
	defer check(n)
	check(a.s[0])
	check(a.m[n])
	check(len(a.s))
	x := straight(n)
	check(x)
	deref(&a.bal)
	c := 0
	for range 3 {
		c += n
	}
	check(c)
	d := 0
	for d < b {
		d++
	}
	check(d)
}

func (a *A) closures(n int) {
	b := a.bal
	k := n
	func() {
		check(k)
	}()
	func() {
		check(b)
	}()
}
`

// The functions that may branch, and the calls that count as branches:
// those whose callee may branch with an operand that may carry a loaded
// value.
func TestCallsMayBranch(t *testing.T) {
	may, calls := callsOf(t, callsSrc)
	wantMay := map[string]bool{
		"check": true, "straight": false, "viaStraight": false, "viaCheck": true,
		"ranged": true, "selects": true, "switches": true,
		"rec1": true, "rec2": true, "loop1": false, "loop2": false,
		"printer": false, "external": true, "(*A).lock": true, "deref": true,
		"(*A).callers": true, "(*A).closures": true, "(*A).closures$1": true, "(*A).closures$2": true,
	}
	if len(may) != len(wantMay) {
		t.Errorf("got %d functions %v, want %d", len(may), may, len(wantMay))
	}
	for fn, w := range wantMay {
		if g, ok := may[fn]; !ok || g != w {
			t.Errorf("%s may branch: got %v (known %v), want %v", fn, g, ok, w)
		}
	}
	// Not: a parameter (61, 69, 71, 74, and the literal called at 102
	// captures k, which holds one), a constant (62), a negated parameter
	// (63), a callee that cannot branch (64-66), a receiver that is an
	// address (72), a builtin (75), a deferred call with a parameter (78),
	// a pointer (84), values that a loaded value only decides through
	// control flow (89, 94: the loops' conditions are branches of their
	// own). Inside a literal, a captured variable is read from memory
	// (the recorder records those reads).
	want := []string{
		"101:check",               // k, captured: read in the literal
		"104:check",               // b, captured
		"105:(*A).closures.func2", // captures b, which holds a loaded value
		"60:check",                // b - n
		"67:viaCheck",
		"68:f",
		"70:M",
		"73:external",
		"76:go check",
		"77:defer check",
		"79:check", // a.s[0]
		"80:check", // a.m[n]
		"81:check", // len(a.s)
		"83:check", // a call's result
	}
	if !slices.Equal(calls, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
}

// The extent of the function that holds a line: the one entered at the
// line the binary gives, else the innermost.
func TestFuncAt(t *testing.T) {
	plan := &Plan{Funcs: map[string][]FuncRange{"f.go": {{3, 20}, {5, 5}, {5, 9}, {12, 14}, {30, 31}}}}
	for _, tc := range []struct {
		line, entry int
		want        FuncRange
		ok          bool
	}{
		{4, 3, FuncRange{3, 20}, true},
		{13, 12, FuncRange{12, 14}, true},
		{13, 0, FuncRange{12, 14}, true}, // the innermost
		{5, 3, FuncRange{3, 20}, true},   // a go statement of two literals' line
		{5, 5, FuncRange{5, 9}, true},    // in one of them: the longer
		{15, 12, FuncRange{3, 20}, true}, // no function entered at 12 holds 15
		{25, 3, FuncRange{}, false},
	} {
		got, ok := plan.funcAt("f.go", tc.line, tc.entry)
		if got != tc.want || ok != tc.ok {
			t.Errorf("funcAt(%d, entry %d) = %v %v, want %v %v", tc.line, tc.entry, got, ok, tc.want, tc.ok)
		}
	}
	if n := countLines([]int{2, 5, 5, 9}, 5, 9); n != 2 {
		t.Errorf("countLines = %d, want 2", n)
	}
	// A line counts unless its only call is the one excepted: the call
	// whose callee's frame the recorder counts instead.
	plan.CallSites = map[Line][]string{
		{"f.go", 4}: {"check"},
		{"f.go", 6}: {"(*T).Get", "check"},
		{"f.go", 7}: {"check", "check"},
	}
	for _, tc := range []struct {
		line   int
		except string
		want   int
	}{
		{4, "", 1}, {4, "check", 0}, {4, "other", 1},
		{6, "(*T).Get", 1}, {7, "check", 1}, {8, "", 0},
	} {
		if got := plan.callLine("f.go", tc.line, tc.except); got != tc.want {
			t.Errorf("callLine(%d, except %q) = %d, want %d", tc.line, tc.except, got, tc.want)
		}
	}
}

// The plan's calls that may branch on a value read in the corpus's
// getset: Bump's s.SetConfig(c), with c from the getter, once, although
// the package and its test variant are both analysed; not s.Config(),
// whose receiver is a parameter, nor the lock calls, on addresses.
func TestPlanCallSites(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := MakePlan(PlanOptions{Dir: root, Pattern: "./testdata/corpus/getset"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for l, sites := range plan.CallSites {
		if filepath.Base(l.File) == "config.go" {
			got = append(got, fmt.Sprintf("%d %v", l.Line, sites))
		}
	}
	slices.Sort(got)
	if want := []string{"41 [(*Server).SetConfig]"}; !slices.Equal(got, want) {
		t.Errorf("call sites %v, want %v", got, want)
	}
	for f, lines := range plan.Calls {
		if filepath.Base(f) == "config.go" && !slices.Equal(lines, []int{41}) {
			t.Errorf("call lines %v, want [41]", lines)
		}
	}
}

// The branches each event of testdata/record/callbranch comes after:
// withdraw's second acquire after check(b - n), which may test the value
// read; deposit's acquire after balance's if, past the read in balance;
// none in add, whose calls pass only a parameter and a constant, nor
// after a.mu.Unlock(), which passes an address, nor at peek's deferred
// unlock, which runs past an if that the read already counted.
func TestRecordCallBranches(t *testing.T) {
	plan, bin := prepare(t, "callbranch", true)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" || oc.Unevaluated != 0 {
		t.Fatalf("outcome %+v", oc)
	}
	var got []string
	for _, e := range tr.Events {
		if !e.Kind.IsAccess() && e.Kind != trace.KindAcquire && e.Kind != trace.KindRelease {
			continue
		}
		got = append(got, fmt.Sprintf("%s %d br=%d", e.Kind, tr.Site(e.Site).Line, e.Branches))
	}
	want := []string{
		// withdraw
		"acq 32 br=0", "rd 33 br=0", "rel 34 br=0", "acq 36 br=1", "wr 37 br=0", "rel 38 br=0",
		// deposit, reading in balance
		"rd 42 br=0", "acq 51 br=1", "wr 52 br=0", "rel 53 br=0",
		// add
		"acq 57 br=0", "rd 58 br=0", "rel 59 br=0", "acq 62 br=0", "wr 63 br=0", "rel 64 br=0",
		// peek: the if before the read; the unlock at the return
		"acq 70 br=0", "rd 75 br=1", "rel 74 br=0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := trace.Validate(tr); err != nil {
		t.Errorf("trace: %v", err)
	}
}

// A lost deposit that check(b - n) rules out is not proven: had the
// withdrawal read the balance before the deposit, check would have
// panicked before the write back. Without check, it is. (The deposit runs
// first in both programs, ordered by a pipe the trace does not record.)
func TestRecordCheckedWithdraw(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"checkedwithdraw", []string{"predicted R-W-W a.bal main.go:29:rd main.go:23:wr main.go:33:wr dropped"}},
		{"uncheckedwithdraw", []string{"proven R-W-W a.bal main.go:26:rd main.go:20:wr main.go:29:wr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, bin := prepare(t, tc.name, true)
			tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
			if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
				t.Fatalf("outcome %+v", oc)
			}
			var got []string
			for _, f := range predict.Predict(tr, predict.Options{All: true, Precise: true}).Findings {
				if f.Var != "a.bal" {
					continue
				}
				s := fmt.Sprintf("%s %s %s", f.Level, f.Pattern, f.Var)
				for _, a := range f.Accesses {
					site := tr.Site(a.Site)
					s += fmt.Sprintf(" %s:%d:%s", filepath.Base(site.File), site.Line, a.Op)
				}
				if f.Dropped != "" {
					s += " dropped"
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// The branches of testdata/record/condcall's if and switches, whose
// conditions read through a call, come after the read, with either
// recorder: on the event after the call, never on the call's own
// acquire, which would leave the read free to see any value.
func TestRecordCondCall(t *testing.T) {
	want := []string{
		"acq 20 br=0", "wr 21 br=0", "rel 22 br=0", // set(2)
		"acq 14 br=0", "rd 16 br=0", "rel 15 br=0", // the if's get
		"acq 20 br=1", "wr 21 br=0", "rel 22 br=0", // set(3)
		"acq 14 br=0", "rd 16 br=0", "rel 15 br=0", // the first switch's get
		"acq 20 br=1", "wr 21 br=0", "rel 22 br=0", // set(4), its case
		"acq 14 br=0", "rd 16 br=0", "rel 15 br=0", // the second switch's get
		"acq 20 br=1", "wr 21 br=0", "rel 22 br=0", // set(5), past no case
	}
	events := func(tr *trace.Trace) []string {
		var got []string
		for _, e := range tr.Events {
			if e.Kind.IsAccess() || e.Kind == trace.KindAcquire || e.Kind == trace.KindRelease {
				got = append(got, fmt.Sprintf("%s %d br=%d", e.Kind, tr.Site(e.Site).Line, e.Branches))
			}
		}
		return got
	}
	t.Run("delve", func(t *testing.T) {
		plan, bin := prepare(t, "condcall", true)
		tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
			t.Fatalf("outcome %+v", oc)
		}
		if got := events(tr); !slices.Equal(got, want) {
			t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("instrument", func(t *testing.T) {
		in, bin, root := prepareInstrumented(t, "condcall", true)
		tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root})
		if got := events(tr); !slices.Equal(got, want) {
			t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
