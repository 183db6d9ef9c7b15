package predict

import (
	"context"
	"fmt"
	"github.com/avcheck/avcheck/internal/tracegen"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/avcheck/avcheck/dynamic/solve"
	"github.com/avcheck/avcheck/dynamic/trace"
)

func bruteFactory(n int, _ solve.Budget) (solve.Solver, error) { return newBruteSolver(n), nil }

// TestPreciseEnginesAgree runs every fixture with the default engine, the
// brute-force one and the external solvers that are installed: the
// findings and their levels agree.
func TestPreciseEnginesAgree(t *testing.T) {
	files, err := filepath.Glob("testdata/predict/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	// The external solvers, where installed, must agree too.
	var external []string
	for _, s := range []string{"z3", "cvc5"} {
		if err := CheckSolver(s); err != nil {
			t.Logf("not cross-checked with %s: %v", s, err)
			continue
		}
		external = append(external, s)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name != "trace" {
				continue
			}
			tr := readFixtureTrace(t, file, f.Data)
			lines := func(o Options) string {
				res := Predict(tr, o)
				var out []string
				for i := range res.Findings {
					out = append(out, fixtureLine(tr, &res.Findings[i]))
				}
				if len(res.Precise.Rejected) > 0 || len(res.Precise.Errors) > 0 {
					t.Errorf("%s: rejected %q, errors %q", file, res.Precise.Rejected, res.Precise.Errors)
				}
				return strings.Join(out, "\n")
			}
			def := lines(Options{All: true, Precise: true})
			brute := lines(Options{All: true, Precise: true, newSolver: bruteFactory})
			if def != brute {
				t.Errorf("%s: default engine:\n%s\nbrute force:\n%s", file, def, brute)
			}
			for _, ext := range external {
				if got := lines(Options{All: true, Precise: true, Solver: ext}); got != def {
					t.Errorf("%s: default engine:\n%s\n%s:\n%s", file, def, ext, got)
				}
			}
		}
	}
}

// counterTrace is a lost update under a lock: g1 reads c.n and writes it
// back in two critical sections of mu, and g2's write can come between.
const counterTrace = `avtrace 1
g1 fork g2
g1 begin region=1.1
g1 acq mu region=1.1
g1 rd c.n @c.go:3 region=1.1
g1 rel mu region=1.1
g1 acq mu region=1.1
g1 wr c.n @c.go:4 region=1.1
g1 rel mu region=1.1
g1 finish region=1.1
g2 acq mu
g2 wr c.n @c.go:9
g2 rel mu
`

// TestPreciseWithoutIt checks that the precise stage is off unless asked
// for: the levels are the cheaper stages'.
func TestPreciseWithoutIt(t *testing.T) {
	tr := readFixtureTrace(t, "counter", []byte(counterTrace))
	for _, tc := range []struct {
		precise bool
		want    string
	}{
		{false, "atomicity R-W-W c.n g1@c.go:3 g2@c.go:9 g1@c.go:4 filtered"},
		{true, "atomicity R-W-W c.n g1@c.go:3 g2@c.go:9 g1@c.go:4 proven"},
	} {
		res := Predict(tr, Options{Precise: tc.precise})
		if len(res.Findings) != 1 || fixtureLine(tr, &res.Findings[0]) != tc.want {
			t.Errorf("Precise=%v: got %d findings, want %q", tc.precise, len(res.Findings), tc.want)
			continue
		}
		if (res.Precise != nil) != tc.precise {
			t.Errorf("Precise=%v: stats %v", tc.precise, res.Precise)
		}
	}
}

// TestPreciseUnknownKeepsLevel: a budget too small to decide leaves the
// finding where the cheaper stages put it.
func TestPreciseUnknownKeepsLevel(t *testing.T) {
	tr := readFixtureTrace(t, "counter", []byte(counterTrace))
	unknown := func(n int, _ solve.Budget) (solve.Solver, error) {
		s := newBruteSolver(n)
		s.limit = 0
		return s, nil
	}
	res := Predict(tr, Options{Precise: true, newSolver: unknown})
	if len(res.Findings) != 1 || res.Findings[0].Level != LevelFiltered || res.Precise.Unknown != 1 {
		t.Fatalf("got %+v, stats %+v", res.Findings, res.Precise)
	}
	// A budget that runs out is not an error.
	res = Predict(tr, Options{Precise: true, Budget: solve.Budget{Time: time.Nanosecond}})
	if len(res.Findings) != 1 || res.Findings[0].Level != LevelFiltered || res.Precise.Unknown != 1 || len(res.Precise.Errors) != 0 {
		t.Fatalf("tiny budget: got %+v, stats %+v", res.Findings, res.Precise)
	}
	failing := func(int, solve.Budget) (solve.Solver, error) { return nil, fmt.Errorf("no solver here") }
	res = Predict(tr, Options{Precise: true, newSolver: failing})
	if len(res.Findings) != 1 || res.Findings[0].Level != LevelFiltered || strings.Join(res.Precise.Errors, ";") != "no solver here" {
		t.Fatalf("got %+v, stats %+v", res.Findings, res.Precise)
	}
}

// TestPreciseStageTime: once the time to decide has run out, the
// findings not checked keep their level with a note, and have no witness
// search: they are the candidates of a prediction without the precise
// stage whose time has run out too, in the same order.
func TestPreciseStageTime(t *testing.T) {
	tr := tracegen.ShapeTrace(tracegen.Shape{Seed: 3, Events: 150, Goroutines: 3, Locks: 2, Vars: 4, Interleaved: true, Violations: true})
	full := Predict(tr, Options{Precise: true})
	if full.Precise.Skipped != 0 || full.Precise.Checks == 0 || full.Unwitnessed != 0 {
		t.Fatalf("with time to spare: stats %+v, %d unwitnessed", full.Precise, full.Unwitnessed)
	}
	without := Predict(tr, Options{StageTime: time.Nanosecond})
	res := Predict(tr, Options{Precise: true, StageTime: time.Nanosecond})
	if res.Precise.Checks != 0 || res.Precise.Skipped == 0 || res.Unwitnessed != len(res.Findings) {
		t.Fatalf("no time: stats %+v, %d of %d unwitnessed", res.Precise, res.Unwitnessed, len(res.Findings))
	}
	for _, f := range res.Findings {
		if f.Level == LevelProven || f.Witness != nil || f.Note != "neither checked by the precise stage nor given a witness schedule: the time to decide the possible violations (-budget) ran out first" {
			t.Errorf("no time: %s %s at level %v, note %q, witness %v", f.Kind, f.Pattern, f.Level, f.Note, f.Witness)
		}
	}
	keys := func(fs []Finding) []string {
		var ks []string
		for _, f := range fs {
			ks = append(ks, DedupeKey(&f)+" "+f.Level.String())
		}
		return ks
	}
	want, got := keys(without.Findings), keys(res.Findings)
	if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("no time: site groups\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWitnessStageTime: without the precise stage, the time to decide
// bounds the witness searches: with none left, each candidate that the
// searches would decide is reported at its level without a witness,
// with a note, where with time to spare they drop some of them.
func TestWitnessStageTime(t *testing.T) {
	tr := tracegen.ShapeTrace(tracegen.Shape{Seed: 4, Events: 150, Goroutines: 3, Locks: 2, Vars: 4, Nesting: 2, Unlocked: 0.2, Interleaved: true, Violations: true})
	full := Predict(tr, Options{All: true})
	res := Predict(tr, Options{StageTime: time.Nanosecond})
	var want, got []string
	dropped := 0
	for _, f := range full.Findings {
		switch f.Dropped {
		case "no schedule of the trace realises it (checked by witness search)":
			dropped++
		case "":
			if f.Witness == nil || f.Note != "" && !strings.HasPrefix(f.Note, "AVFilter doubts it: ") {
				t.Errorf("with time to spare: %s without a witness, note %q", DedupeKey(&f), f.Note)
			}
		default:
			continue
		}
		want = append(want, DedupeKey(&f))
	}
	for _, f := range res.Findings {
		got = append(got, DedupeKey(&f))
	}
	slices.Sort(want)
	slices.Sort(got)
	if dropped == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") || res.Unwitnessed != len(res.Findings) {
		t.Fatalf("%d dropped by the witness search with time to spare, %d of %d unwitnessed without; site groups\n%s\nwant\n%s", dropped, res.Unwitnessed, len(res.Findings), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range res.Findings {
		if f.Witness != nil || f.Dropped != "" || !strings.HasSuffix(f.Note, "no witness schedule searched: the time to decide the possible violations (-budget) ran out first") {
			t.Errorf("no time: %s with witness %v, dropped %q, note %q", DedupeKey(&f), f.Witness, f.Dropped, f.Note)
		}
	}
}

// TestPreciseWindow: with a window smaller than the events between the
// finding's accesses, the window grows to hold them all.
func TestPreciseWindow(t *testing.T) {
	var b strings.Builder
	b.WriteString("avtrace 1\ng1 fork g2\ng1 begin region=1.1\ng1 rd x @w.go:1 region=1.1 v=0\n")
	for range 30 {
		b.WriteString("g1 rd y @w.go:2 region=1.1 v=0\n")
	}
	b.WriteString("g1 wr x @w.go:3 region=1.1 v=1\ng1 finish region=1.1\ng2 wr x @w.go:9 v=5\n")
	tr := readFixtureTrace(t, "window", []byte(b.String()))
	for _, w := range []int{8, 1000} {
		res := Predict(tr, Options{Precise: true, Window: w})
		var got []string
		for i := range res.Findings {
			got = append(got, fixtureLine(tr, &res.Findings[i]))
			checkWitness(t, tr, &res.Findings[i])
		}
		want := "race R-W x g1@w.go:1 g2@w.go:9 proven\natomicity R-W-W x g1@w.go:1 g2@w.go:9 g1@w.go:3 proven\nrace W-W x g1@w.go:3 g2@w.go:9 proven"
		if strings.Join(got, "\n") != want {
			t.Errorf("window %d:\n%s\nwant:\n%s", w, strings.Join(got, "\n"), want)
		}
	}
}

// TestPreciseWindowUnsatIsNotFinal: in the counter, a window that starts
// inside g1's first critical section and ends before g2 releases the lock
// has no room for g2's section between g1's two: unsatisfiable, but the
// whole trace shows the finding feasible. A trace longer than the retry
// bound leaves it undecided, with a note that says why.
func TestPreciseWindowUnsatIsNotFinal(t *testing.T) {
	tr := readFixtureTrace(t, "counter", []byte(counterTrace))
	for _, tc := range []struct {
		window int
		want   Level
		note   string
	}{
		{6, LevelProven, ""},
		{2, LevelFiltered, "not decided by the precise stage: no interleaving of events 3-10 shows it with the events before them run as recorded, but the trace (12 events) is too long to check whole"},
	} {
		res := Predict(tr, Options{Precise: true, Window: tc.window})
		if len(res.Findings) != 1 || res.Findings[0].Level != tc.want || res.Findings[0].Note != tc.note {
			t.Errorf("window %d: got %+v, want level %s, note %q", tc.window, res.Findings, tc.want, tc.note)
		}
	}
}

// randomValueTrace simulates a small program of goroutines that read and
// write two variables, some under a lock, and records the run with its
// values, some of them left out, and random branch counts.
func randomValueTrace(rng *rand.Rand) *trace.Trace {
	type op struct {
		kind trace.Kind
		obj  string
	}
	ngo := 2 + rng.IntN(2)
	progs := make([][]op, ngo)
	for g := range progs {
		n := 1 + rng.IntN(4-ngo/2)
		for range n {
			v := []string{"x", "y"}[rng.IntN(2)]
			k := trace.KindRead
			if rng.IntN(2) == 0 {
				k = trace.KindWrite
			}
			if rng.IntN(4) == 0 {
				progs[g] = append(progs[g], op{trace.KindAcquire, "mu"}, op{k, v}, op{trace.KindRelease, "mu"})
			} else {
				progs[g] = append(progs[g], op{k, v})
			}
		}
	}
	var lines []string
	lines = append(lines, "avtrace 1")
	for g := 1; g < ngo; g++ {
		progs[0] = append([]op{{trace.KindFork, fmt.Sprint(g + 1)}}, progs[0]...)
	}
	mem := map[string]int{}
	next := make([]int, ngo)
	started := make([]bool, ngo)
	started[0] = true
	holder := -1
	for {
		var ready []int
		for g := range progs {
			if !started[g] || next[g] >= len(progs[g]) {
				continue
			}
			if progs[g][next[g]].kind == trace.KindAcquire && holder >= 0 {
				continue
			}
			ready = append(ready, g)
		}
		if len(ready) == 0 {
			break
		}
		g := ready[rng.IntN(len(ready))]
		o := progs[g][next[g]]
		next[g]++
		line := fmt.Sprintf("g%d %s %s", g+1, o.kind, o.obj)
		switch o.kind {
		case trace.KindFork:
			line = fmt.Sprintf("g%d fork g%s", g+1, o.obj)
			c, err := strconv.Atoi(o.obj)
			if err != nil {
				panic(err)
			}
			started[c-1] = true
		case trace.KindAcquire:
			holder = g
		case trace.KindRelease:
			holder = -1
		case trace.KindRead:
			if rng.IntN(5) != 0 {
				v := mem[o.obj]
				line += fmt.Sprintf(" v=%d", v)
				// A range around the value, with or without bounds.
				if rng.IntN(3) == 0 {
					lo, hi := fmt.Sprint(v-rng.IntN(2)), fmt.Sprint(v+rng.IntN(2))
					if rng.IntN(4) == 0 {
						lo = ""
					}
					if rng.IntN(4) == 0 {
						hi = ""
					}
					line += " range=" + lo + ".." + hi
				}
				if o.obj == "y" && rng.IntN(2) == 0 {
					line += " flags=4" // the value is a length (y may be a slice)
				}
			}
		case trace.KindWrite:
			mem[o.obj] = rng.IntN(3)
			flags := 0
			if rng.IntN(5) != 0 {
				line += fmt.Sprintf(" v=%d", mem[o.obj])
				if rng.IntN(3) == 0 {
					flags |= 64 // the value is a constant of the program
				}
			}
			if rng.IntN(3) == 0 {
				flags |= 8 // the address depends on values read
			}
			if flags != 0 {
				line += fmt.Sprintf(" flags=%d", flags)
			}
		}
		if rng.IntN(3) == 0 {
			line += " br=1"
		}
		lines = append(lines, line)
	}
	tr, err := trace.ReadAll(trace.NewTextReader(strings.NewReader(strings.Join(lines, "\n")+"\n"), "random"))
	if err != nil {
		panic(err)
	}
	return tr
}

// oracle enumerates every schedule prefix of a small trace that respects
// program order, forks and locks, and in which the reads read what the
// approximation allows (see precise.go and precise_values.go: relaxed is
// the one that refutes, otherwise the one that proves), and returns the
// target tuples some prefix exhibits: (e1, f, e2) in order with e2 last,
// or, for adjacent pairs, (a, b) back to back at the end. It shares no
// code with the encoding: it runs each prefix, keeping per goroutine
// whether its reads so far saw their recorded values (exact) and kept
// their ranges (course), per write whether it wrote its recorded value,
// and whether a write whose address varies wrote elsewhere (clobbered).
type oracle struct {
	t       *trace.Trace
	relaxed bool
	src     []int         // recorded source of each read, -1 for the initial state
	val     map[int]int64 // known values: write+1, or -1-obj for the initial state
	lens    map[int]int64 // the same for lengths
	user    []int         // per read, the first later event of its goroutine after a branch, -1 if none
	tookIn  []bool        // per event, whether its goroutine (or its parent before the fork) read before it
}

func newOracle(t *trace.Trace, relaxed bool) *oracle {
	o := &oracle{t: t, relaxed: relaxed, src: make([]int, len(t.Events)), val: map[int]int64{}, lens: map[int]int64{}, user: make([]int, len(t.Events))}
	last := map[trace.ObjID]int{}
	bad := map[int]bool{}
	badLen := map[int]bool{}
	for i, e := range t.Events {
		o.src[i], o.user[i] = -1, -1
		switch e.Kind {
		case trace.KindWrite:
			last[e.Obj] = i + 1
			if e.Flags&trace.HasValue != 0 {
				o.val[i+1] = int64(e.Value)
			}
		case trace.KindRead:
			w := last[e.Obj]
			o.src[i] = w - 1
			if e.Flags&trace.HasValue == 0 {
				continue
			}
			key := w // 0 for the initial state of e.Obj, keyed apart below
			if w == 0 {
				key = -1 - int(e.Obj)
			}
			table, poisoned := o.val, bad
			if e.Flags&trace.ValueIsLen != 0 {
				table, poisoned = o.lens, badLen
			} else if w > 0 && t.Events[w-1].Flags&trace.HasValue != 0 {
				continue
			}
			if v, ok := table[key]; ok && v != int64(e.Value) {
				poisoned[key] = true
			}
			table[key] = int64(e.Value)
		}
	}
	for k := range bad {
		delete(o.val, k)
	}
	for k := range badLen {
		delete(o.lens, k)
	}
	o.tookIn = make([]bool, len(t.Events))
	read := map[trace.GoID]bool{}
	for i, e := range t.Events {
		o.tookIn[i] = read[e.G]
		switch e.Kind {
		case trace.KindRead:
			read[e.G] = true
		case trace.KindFork:
			read[trace.GoID(e.Arg)] = read[e.G]
		}
	}
	for i, e := range t.Events {
		if e.Kind != trace.KindRead {
			continue
		}
		for j := i + 1; j < len(t.Events); j++ {
			if f := t.Events[j]; f.G == e.G && f.Branches > 0 {
				o.user[i] = j
				break
			}
		}
	}
	return o
}

// known returns the known value (or length) of what read r reads from
// write w (-1: the initial state).
func (o *oracle) known(r, w int) (int64, bool) {
	e := o.t.Events[r]
	key := w + 1
	if w < 0 {
		key = -1 - int(e.Obj)
	}
	if e.Flags&trace.ValueIsLen != 0 {
		v, ok := o.lens[key]
		return v, ok
	}
	v, ok := o.val[key]
	return v, ok
}

// mayRelaxed reports whether, under the approximation that refutes, read
// r may read write w, when a write whose address varies and whose
// goroutine read before it has run (clobbered) or not. Such a write may
// have written anywhere, and a write whose goroutine read before it may
// have written anything: those reads may have seen other values, unless
// it writes a constant.
func (o *oracle) mayRelaxed(r, w int, clobbered bool) bool {
	if w == o.src[r] || clobbered || w >= 0 && o.tookIn[w] && !o.constant(w) {
		return true
	}
	e := o.t.Events[r]
	wv, wok := o.known(r, w)
	if rng, ok := e.Range(); ok && wok {
		return rng.Contains(wv)
	}
	if e.Flags&trace.HasValue == 0 || !wok {
		return true
	}
	return wv == int64(e.Value) // a value, or a length
}

// constant reports whether write w stores a constant of the program
// (trace.ValueConst): its value whatever its goroutine read before it.
func (o *oracle) constant(w int) bool {
	return o.t.Events[w].Flags&trace.ValueConst != 0
}

// sk returns S and K of read r reading w, which wrote its recorded value
// if valid, under the approximation that proves.
func (o *oracle) sk(r, w int, valid, clobbered bool) (s, k bool) {
	if clobbered {
		return false, false
	}
	e := o.t.Events[r]
	wv, wok := o.known(r, w)
	s = valid && (w == o.src[r] || e.Flags&trace.HasValue != 0 && e.Flags&trace.ValueIsLen == 0 && wok && wv == int64(e.Value))
	rng, ranged := e.Range()
	if !ranged {
		return s, s
	}
	full := rng == trace.Range{Lo: math.MinInt64, Hi: math.MaxInt64}
	k = full || valid && (w == o.src[r] || wok && rng.Contains(wv))
	return s, k
}

func (o *oracle) feasible() map[[4]int]bool {
	t := o.t
	out := map[[4]int]bool{}
	n := len(t.Events)
	byG := map[trace.GoID][]int{}
	for i, e := range t.Events {
		byG[e.G] = append(byG[e.G], i)
	}
	forkOf := map[trace.GoID]int{}
	for i, e := range t.Events {
		if e.Kind == trace.KindFork {
			forkOf[trace.GoID(e.Arg)] = i
		}
	}
	// The state of the prefix run so far.
	seen := make([]int, n)   // per executed read, the write it read
	kOK := make([]bool, n)   // per executed read: K (relaxed: it read what it may)
	valid := make([]bool, n) // per executed write: it wrote its recorded value
	courseOK := make([]bool, n)
	exact := map[trace.GoID]bool{}
	course := map[trace.GoID]bool{}
	clobbered := false
	lastW := map[trace.ObjID]int{}
	holder := map[trace.ObjID]trace.GoID{}
	next := map[trace.GoID]int{}
	for g := range byG {
		exact[g], course[g] = true, true
	}
	var path []int
	var dfs func()
	dfs = func() {
		if len(path) > 0 {
			ev := path[len(path)-1]
			// Record every tuple ending here.
			addrOK := func(i int) bool {
				return o.relaxed || t.Events[i].Kind != trace.KindWrite || t.Events[i].Flags&trace.AddrVaries == 0 || valid[i]
			}
			for x, a := range path[:len(path)-1] {
				if t.Events[a].Obj != t.Events[ev].Obj {
					continue
				}
				for _, b := range path[x+1 : len(path)-1] {
					if addrOK(a) && addrOK(b) && addrOK(ev) {
						out[[4]int{0, a, b, ev}] = true
					}
				}
			}
			if len(path) > 1 && addrOK(path[len(path)-2]) && addrOK(ev) {
				out[[4]int{1, path[len(path)-2], ev}] = true
			}
			// Going on, ev is no longer the last: its address (or the
			// value it passes on) must be as recorded.
			if !courseOK[ev] {
				return
			}
		}
		for g, evs := range byG {
			k := next[g]
			if k >= len(evs) {
				continue
			}
			i := evs[k]
			e := t.Events[i]
			if f, ok := forkOf[g]; ok && !slices.Contains(path, f) {
				continue
			}
			if e.Kind == trace.KindAcquire {
				if _, held := holder[e.Obj]; held {
					continue
				}
			}
			// The reads a branch before i may test must have read what
			// they may.
			ok := true
			for _, r := range path {
				if t.Events[r].Kind == trace.KindRead && o.user[r] == i && !kOK[r] {
					ok = false
				}
			}
			if !ok {
				continue
			}
			prevW, hadW := lastW[e.Obj]
			prevExact, prevCourse, prevClobbered := exact[g], course[g], clobbered
			courseOK[i] = o.relaxed || course[g] || !(e.Kind.IsAccess() || e.Kind == trace.KindFork)
			switch e.Kind {
			case trace.KindAcquire:
				holder[e.Obj] = g
			case trace.KindRelease:
				delete(holder, e.Obj)
			case trace.KindWrite:
				lastW[e.Obj] = i
				valid[i] = exact[g]
				if e.Flags&trace.AddrVaries != 0 && (!valid[i] || o.relaxed && o.tookIn[i]) {
					clobbered = true
				}
			case trace.KindRead:
				w := -1
				if hadW {
					w = prevW
				}
				seen[i] = w
				if o.relaxed {
					kOK[i] = o.mayRelaxed(i, w, clobbered)
				} else {
					s, k := o.sk(i, w, w < 0 || valid[w] || o.constant(w), clobbered)
					kOK[i] = k
					exact[g] = exact[g] && s
					course[g] = course[g] && k
				}
			}
			path = append(path, i)
			next[g]++
			dfs()
			next[g]--
			path = path[:len(path)-1]
			exact[g], course[g], clobbered = prevExact, prevCourse, prevClobbered
			switch e.Kind {
			case trace.KindAcquire:
				delete(holder, e.Obj)
			case trace.KindRelease:
				holder[e.Obj] = g
			case trace.KindWrite:
				if hadW {
					lastW[e.Obj] = prevW
				} else {
					delete(lastW, e.Obj)
				}
			}
		}
	}
	dfs()
	return out
}

// TestPreciseDifferential compares the precise stage's answer for every
// triplet and pair of accesses of one variable in random small traces
// with an enumeration of their schedules: Sat exactly when a schedule
// exhibits it with the known values, Unsat exactly when none does even
// with unknown values free, Unknown otherwise. Both the default engine
// and the brute-force solver answer the encoding.
func TestPreciseDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	counts := map[string]int{}
	for iter := range 150 {
		tr := randomValueTrace(rng)
		strict := newOracle(tr, false).feasible()
		relaxed := newOracle(tr, true).feasible()
		m := newSyncMeta(tr)
		engines := []struct {
			name string
			f    solverFactory
		}{{"gini", nil}}
		if len(tr.Events) <= 12 {
			engines = append(engines, engines[0])
			engines[1].name, engines[1].f = "brute", bruteFactory
		}
		for _, engine := range engines {
			ps := newPreciseStage(tr, m, m.newPrefixState(), &Options{Precise: true, newSolver: engine.f})
			check := func(key [4]int, targets []uint32, adjacent bool) {
				res := ps.check(targets, adjacent)
				want := solve.Unknown
				switch {
				case strict[key]:
					want = solve.Sat
				case !relaxed[key]:
					want = solve.Unsat
				}
				counts[want.String()]++
				if res.status != want || res.err != "" {
					t.Fatalf("trace %d, %s, targets %v adjacent=%v: got %s (%s), want %s\n%s", iter, engine.name, targets, adjacent, res.status, res.err, want, traceText(tr))
				}
			}
			forEachCandidate(tr, check)
		}
		// A window smaller than the trace runs the events before it as
		// recorded and starts from their state: a Sat there is one of
		// the whole trace, and an Unsat (checked again over the whole
		// trace) is one too.
		for w := 2; w < len(tr.Events); w += 2 {
			ps := newPreciseStage(tr, m, m.newPrefixState(), &Options{Precise: true, Window: w})
			forEachCandidate(tr, func(key [4]int, targets []uint32, adjacent bool) {
				res := ps.check(targets, adjacent)
				if res.status == solve.Sat && !strict[key] || res.status == solve.Unsat && relaxed[key] || res.rejected {
					t.Fatalf("trace %d, window %d, targets %v adjacent=%v: got %s (%s), but strict %v, relaxed %v\n%s", iter, w, targets, adjacent, res.status, res.err, strict[key], relaxed[key], traceText(tr))
				}
				if res.status == solve.Sat && res.from > 0 {
					counts["sat in a window"]++
				}
			})
		}
	}
	t.Logf("answers: %v", counts)
	for _, s := range []string{"sat", "unsat", "unknown", "sat in a window"} {
		if counts[s] == 0 {
			t.Errorf("no %s answer in the random traces: the test does not cover it", s)
		}
	}
}

// forEachCandidate calls check for every pair of accesses of one
// variable by two goroutines, both ways (adjacent), and every triplet
// (e1, f, e2) with e1 and e2 of one goroutine, in trace order, and f of
// another: key is the oracle's.
func forEachCandidate(tr *trace.Trace, check func(key [4]int, targets []uint32, adjacent bool)) {
	for a := range tr.Events {
		ea := tr.Events[a]
		if !ea.Kind.IsAccess() {
			continue
		}
		for b := range tr.Events {
			eb := tr.Events[b]
			if b == a || !eb.Kind.IsAccess() || eb.Obj != ea.Obj || eb.G == ea.G {
				continue
			}
			check([4]int{1, a, b}, []uint32{uint32(a), uint32(b)}, true)
			for c := a + 1; c < len(tr.Events); c++ {
				ec := tr.Events[c]
				if !ec.Kind.IsAccess() || ec.Obj != ea.Obj || ec.G != ea.G {
					continue
				}
				check([4]int{0, a, b, c}, []uint32{uint32(a), uint32(b), uint32(c)}, false)
			}
		}
	}
}

func traceText(tr *trace.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		b.WriteString(e.String() + "\n")
	}
	return b.String()
}

// closeCounter wraps a solver to count its Close calls.
type closeCounter struct {
	solve.Solver
	closed *int
}

func (c closeCounter) Close() error {
	*c.closed++
	return c.Solver.Close()
}

// TestPreciseClosesOversizedEncoding: an encoding that outgrows its size
// bound still closes its solver (an external one is a process).
func TestPreciseClosesOversizedEncoding(t *testing.T) {
	tr := readFixtureTrace(t, "counter", []byte(counterTrace))
	opened, closed := 0, 0
	counting := func(n int, b solve.Budget) (solve.Solver, error) {
		opened++
		return closeCounter{solve.New(n, b), &closed}, nil
	}
	m := newSyncMeta(tr)
	ps := newPreciseStage(tr, m, m.newPrefixState(), &Options{Precise: true, newSolver: counting})
	ps.maxSize = 1
	res := ps.check([]uint32{3, 10, 6}, false)
	if res.status != solve.Unknown || res.err != errTooLarge.Error() || opened == 0 || closed != opened {
		t.Errorf("got %s (%s); opened %d solvers, closed %d", res.status, res.err, opened, closed)
	}
}

// stallSolver answers no check until its budget's Stop is closed: a check
// that would outlast any patience.
type stallSolver struct {
	solve.Solver
	stop <-chan struct{}
}

func (s stallSolver) Check(...solve.Lit) solve.Status {
	<-s.stop
	return solve.Unknown
}

// TestPredictStops: a cancelled Options.Context ends the prediction
// within a second, whatever stage it is in (the index's build too), and
// the result says so; a
// candidate whose decision was cut short is not reported.
func TestPredictStops(t *testing.T) {
	tr := readFixtureTrace(t, "counter", []byte(counterTrace))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	res := Predict(tr, Options{Precise: true, Context: cancelled})
	if !res.Stopped || res.Candidates != 0 || res.Decided != 0 || len(res.Findings) != 0 {
		t.Errorf("cancelled before it starts: stopped %v, %d of %d decided, %d findings; want stopped and nothing", res.Stopped, res.Decided, res.Candidates, len(res.Findings))
	}

	stall := func(n int, b solve.Budget) (solve.Solver, error) { return stallSolver{newBruteSolver(n), b.Stop}, nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res = Predict(tr, Options{Precise: true, Budget: solve.Budget{Time: time.Hour}, Context: ctx, newSolver: stall})
	if took := time.Since(start); took > time.Second {
		t.Errorf("stopped in the precise stage after 200ms, returned after %v", took.Round(time.Millisecond))
	}
	if !res.Stopped || res.Candidates != 1 || res.Decided != 0 || len(res.Findings) != 0 {
		t.Errorf("stopped in the precise stage: stopped %v, %d of %d decided, %d findings; want stopped, 0 of 1", res.Stopped, res.Decided, res.Candidates, len(res.Findings))
	}

	// Stopped while the index is built: an index that would never be
	// ready.
	never := make(chan struct{})
	defer close(never)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	res = Predict(tr, Options{Context: ctx, newIndex: func(t *trace.Trace) *patIndex { <-never; return buildIndex(t) }})
	if !res.Stopped || res.Candidates != 0 || len(res.Findings) != 0 {
		t.Errorf("stopped in the index's build: stopped %v, %d candidates, %d findings; want stopped and nothing", res.Stopped, res.Candidates, len(res.Findings))
	}

	var calls []int
	res = Predict(tr, Options{Precise: true, Context: context.Background(), Progress: func(decided, n int) { calls = append(calls, decided, n) }})
	if res.Stopped || res.Candidates != 1 || res.Decided != 1 || len(res.Findings) != 1 || !slices.Equal(calls, []int{1, 1}) {
		t.Errorf("not stopped: stopped %v, %d of %d decided, %d findings, progress %v; want 1 of 1, progress [1 1]", res.Stopped, res.Decided, res.Candidates, len(res.Findings), calls)
	}
}

// A read of a pointer decides which variable a later access goes through
// when the access's address is inside what the pointer points to, also
// when the recorder gave the variable a new generation (an object made
// where the garbage collector freed another, addr | gen<<48): the
// pointer holds the address alone.
func TestAddressUsersGeneration(t *testing.T) {
	const p = 0xc000010000
	evs := []trace.Event{
		{Kind: trace.KindRead, G: 1, Obj: 0xc000020000, Value: p, Arg: 16, Flags: trace.HasValue | trace.ValueIsAddr},
		{Kind: trace.KindWrite, G: 1, Obj: p + 8 | 3<<48},
		{Kind: trace.KindRead, G: 1, Obj: 0xc000020000, Value: 0, Arg: 16, Flags: trace.HasValue | trace.ValueIsAddr},
		{Kind: trace.KindWrite, G: 1, Obj: 1<<63 | 8},
	}
	users := addressUsers(evs, []int{1, 3}, func(int) bool { return true })
	if want := []int{1, -1, -1, -1}; !slices.Equal(users, want) {
		t.Errorf("addressUsers = %v, want %v", users, want)
	}
}

// regionsTrace has two instances of one violation's sites in two regions
// (two tests' loops calling the same methods): g1's, nearest the write,
// proposed by proximity alone, and g3's, whose reads are used together.
// Each instance is held to its own region's intent: the finding is g3's,
// with g3's intent, where holding every instance to the nearest one's
// region left it out.
const regionsTrace = `avtrace 1
site 1 c.go:3:2
site 2 c.go:5:2
g1 fork g2
g1 fork g3
g3 begin region=2.1 intent=read-pair,1,2
g3 rd x @1 region=2.1
g3 rd x @2 region=2.1
g3 finish region=2.1
g3 rd y @c.go:20:2
g3 rd y @c.go:20:2
g3 rd y @c.go:20:2
g1 begin region=1.1 intent=none
g1 rd x @1 region=1.1
g1 rd x @2 region=1.1
g1 finish region=1.1
g2 wr x @c.go:9:2
`

func TestIntentPerInstance(t *testing.T) {
	tr := readFixtureTrace(t, "regions", []byte(regionsTrace))
	var got []string
	for _, f := range Predict(tr, Options{Precise: true}).Findings {
		if f.Kind == KindAtomicity {
			got = append(got, fixtureLine(tr, &f)+" "+f.Intent.Evidence.String())
		}
	}
	if want := []string{"atomicity R-W-R x g3@c.go:3 g2@c.go:9 g3@c.go:5 proven read-pair"}; !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}
