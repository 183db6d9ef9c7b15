package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// The serial counter run: g1's region reads and writes c.n in two
// critical sections and g2's write comes after it. The recorded run is
// serializable; the interleaving with g2's write between g1's sections is
// not.
const serialCounter = `avtrace 1
g1 fork g2
g1 begin region=1.1
g1 acq mu region=1.1
g1 rd c.n @c.go:3:2 region=1.1
g1 rel mu region=1.1
g1 acq mu region=1.1
g1 wr c.n @c.go:4:2 region=1.1
g1 rel mu region=1.1
g1 finish region=1.1
g2 acq mu
g2 wr c.n @c.go:9:2
g2 rel mu
`

const noRace = `avtrace 1
g1 fork g2
g1 acq mu
g1 wr c.n @c.go:3:2
g1 rel mu
g2 acq mu
g2 wr c.n @c.go:9:2
g2 rel mu
`

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runPredictTest(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = predictMain(args, &o, &e)
	return code, o.String(), e.String()
}

func TestPredictText(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	code, out, errOut := runPredictTest(p)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitFindings, errOut)
	}
	want := []string{
		"c.go:3:2: c.n: g1 reads then writes c.n in one region, and g2's write can run between them (R-W-W); the update can be lost",
		"\tc.go:9:2: g2 writes c.n (interleaved)",
		"\tc.go:4:2: g1 writes c.n (last)",
		"\tlevel: proven",
		"\twitness: run the trace's events before #3 as recorded, then:",
		"\t\tg2 c.go:9:2 wr c.n",
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// A trace whose goroutines' clocks would pass the bound (clockWords,
// lowered here) is predicted up to where they would, with a line that
// says so: the finding before the cut is reported.
func TestPredictClockBound(t *testing.T) {
	defer func(w int64) { clockWords = w }(clockWords)
	clockWords = 20
	var b strings.Builder
	b.WriteString(serialCounter)
	for g := 3; g <= 10; g++ {
		fmt.Fprintf(&b, "g1 fork g%d\n", g)
	}
	p := writeTemp(t, "trace.txt", b.String())
	code, out, errOut := runPredictTest(p)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitFindings, errOut)
	}
	want := "avcheck predict: the prediction covers the trace's first 14 events of 20: past them, 5 goroutines alive at once, each with a clock as wide as the 5 goroutines seen, would take more than 0 MB\n"
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if !strings.Contains(out, "c.go:3:2: c.n: g1 reads then writes c.n in one region, and g2's write can run between them (R-W-W)") {
		t.Errorf("the finding before the cut is not reported:\n%s", out)
	}
}

func TestPredictJSON(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	code, out, _ := runPredictTest("-json", p)
	if code != exitFindings {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Version  int `json:"version"`
		Findings []struct {
			Kind     string `json:"kind"`
			Pattern  string `json:"pattern"`
			Level    string `json:"level"`
			Variable string `json:"variable"`
			Accesses []struct {
				File      string `json:"file"`
				Line      int    `json:"line"`
				Col       int    `json:"col"`
				Op        string `json:"op"`
				Goroutine int    `json:"goroutine"`
				Role      string `json:"role"`
			} `json:"accesses"`
			Witness []struct {
				Seq       uint64 `json:"seq"`
				Goroutine int    `json:"goroutine"`
				Op        string `json:"op"`
			} `json:"witness"`
		} `json:"findings"`
		Stats struct {
			Events     int     `json:"events"`
			Goroutines int     `json:"goroutines"`
			Variables  int     `json:"variables"`
			Seconds    float64 `json:"seconds"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, out)
	}
	if doc.Version != 1 || len(doc.Findings) != 1 {
		t.Fatalf("version %d, %d findings", doc.Version, len(doc.Findings))
	}
	f := doc.Findings[0]
	if f.Kind != "atomicity" || f.Pattern != "R-W-W" || f.Level != "proven" || f.Variable != "c.n" {
		t.Errorf("finding %+v", f)
	}
	if len(f.Accesses) != 3 || f.Accesses[0].File != "c.go" || f.Accesses[0].Line != 3 || f.Accesses[0].Col != 2 ||
		f.Accesses[0].Op != "rd" || f.Accesses[0].Goroutine != 1 || f.Accesses[0].Role != "first" ||
		f.Accesses[1].Role != "interleaved" || f.Accesses[2].Role != "last" {
		t.Errorf("accesses %+v", f.Accesses)
	}
	if len(f.Witness) == 0 || f.Witness[len(f.Witness)-1].Op != "wr" {
		t.Errorf("witness %+v", f.Witness)
	}
	if doc.Stats.Events != 12 || doc.Stats.Goroutines != 2 || doc.Stats.Variables != 1 {
		t.Errorf("stats %+v", doc.Stats)
	}
}

// The recorded run is serial: observed mode reports nothing, prediction
// reports the interleaving that loses the update.
func TestPredictObservedVersusPredict(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	if code, out, errOut := runPredictTest("-mode=observed", p); code != exitClean || out != "" {
		t.Errorf("observed: exit %d, output %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := runPredictTest("-mode=predict", p); code != exitFindings {
		t.Errorf("predict: exit %d, want %d", code, exitFindings)
	}
}

// The precise stage proves the serial counter's violation; without it
// the finding stays at AVFilter's level.
func TestPredictPrecise(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "\tlevel: proven\n"},
		{[]string{"-precise=false"}, "\tlevel: filtered\n"},
		{[]string{"-window=3"}, "\tlevel: proven\n"},
	} {
		code, out, errOut := runPredictTest(append(tc.args, p)...)
		if code != exitFindings || !strings.Contains(out, tc.want) || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q, output:\n%s\nwant %q", tc.args, code, errOut, out, tc.want)
		}
	}
}

// TestPredictBudget: a time to decide (-budget) that runs out leaves the
// findings not checked by the precise stage, nor searched for a witness,
// at their level, with a note, and says so on stderr.
func TestPredictBudget(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	code, out, errOut := runPredictTest("-budget=1ns", p)
	want := "\tlevel: filtered\n\tnote: neither checked by the precise stage nor given a witness schedule: the time to decide the possible violations (-budget) ran out first\n"
	if code != exitFindings || !strings.Contains(out, want) {
		t.Errorf("exit %d, output:\n%s\nwant %q", code, out, want)
	}
	if wantErr := "avcheck predict: precise stage: its time (-budget) ran out before it checked 1 possible violation; those reported keep their level, with a note\n" +
		"avcheck predict: its time (-budget) ran out before it searched a witness schedule for 1 finding; those are reported at their level without one, with a note\n"; errOut != wantErr {
		t.Errorf("stderr %q, want %q", errOut, wantErr)
	}
}

// Seed 000 Fig. 6 with x initially 0: the predicted triplet is not
// feasible with the values the run read, so nothing is reported; -all
// shows it as infeasible.
func TestPredictInfeasible(t *testing.T) {
	p := writeTemp(t, "trace.txt", `avtrace 1
g1 wr x @fig6.go:1 v=0
g1 fork g2
g2 acq mu
g2 wr x @fig6.go:2 v=1
g2 rel mu
g1 begin region=1.1
g1 acq mu region=1.1
g1 rd x @fig6.go:3 region=1.1 v=1
g1 rel mu region=1.1
g1 acq mu region=1.1 br=1
g1 wr x @fig6.go:5 region=1.1 v=2
g1 rel mu region=1.1
g1 finish region=1.1
`)
	if code, out, errOut := runPredictTest(p); code != exitClean || out != "" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ := runPredictTest("-all", p)
	if code != exitClean || !strings.Contains(out, "infeasible: no interleaving of events 0-12 exhibits it") {
		t.Errorf("-all: exit %d, output:\n%s", code, out)
	}
}

// An external solver that is not installed is one error line, exit 1,
// before the trace is read.
func TestPredictSolverMissing(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	t.Setenv("PATH", t.TempDir())
	code, out, errOut := runPredictTest("-solver=z3", p)
	first, _, _ := strings.Cut(errOut, "\n")
	if code != exitError || out != "" || !strings.HasPrefix(first, "avcheck predict: solver z3: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Without the precise stage the solver is not needed.
	if code, _, errOut := runPredictTest("-solver=z3", "-precise=false", p); code != exitFindings {
		t.Errorf("-precise=false: exit %d, stderr %q", code, errOut)
	}
}

func TestPredictNothing(t *testing.T) {
	p := writeTemp(t, "trace.txt", noRace)
	code, out, errOut := runPredictTest(p)
	if code != exitClean || out != "" || errOut != "" {
		t.Errorf("exit %d, output %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runPredictTest("-json", p)
	if code != exitClean || !strings.Contains(out, `"findings": []`) {
		t.Errorf("json: exit %d, output %s", code, out)
	}
}

func TestPredictBadInput(t *testing.T) {
	bad := writeTemp(t, "trace.txt", "avtrace 1\ng1 fork g2\ng1 rdd x\n")
	tests := []struct {
		name string
		args []string
		code int
		want string // the whole of stderr's first line, or a prefix ending in "*"
	}{
		{"malformed", []string{bad}, exitError, `trace.txt:3: unknown event kind "rdd"`},
		{"missing", []string{filepath.Join(t.TempDir(), "nope.txt")}, exitError, "avcheck predict: *"},
		{"unknown flag", []string{"-bogus", bad}, exitUsage, "avcheck predict: flag provided but not defined: -bogus"},
		{"no file", nil, exitUsage, "avcheck predict: no trace file given"},
		{"no file but flags", []string{"-json", "--"}, exitUsage, "avcheck predict: no trace file given"},
		{"two files", []string{bad, "-json", bad}, exitUsage, "avcheck predict: one trace file at a time, not 2 (" + bad + " " + bad + ")"},
		{"unknown flag after the file", []string{bad, "-bogus"}, exitUsage, "avcheck predict: flag provided but not defined: -bogus"},
		{"empty file", []string{writeTemp(t, "empty.txt", "")}, exitError, "empty.txt:1: empty trace: no header and no events"},
		{"only comments", []string{writeTemp(t, "notes.txt", "# a trace to come\n\n")}, exitError, "notes.txt:1: empty trace: no header and no events"},
		{"bad format", []string{"-format=xml", bad}, exitUsage, `avcheck predict: unknown trace format "xml" *`},
		{"bad mode", []string{"-mode=guess", bad}, exitUsage, `avcheck predict: unknown mode "guess" *`},
		{"bad engine", []string{"-engine=fast", bad}, exitUsage, `avcheck predict: unknown engine "fast" *`},
		{"bad solver", []string{"-solver=minisat", bad}, exitUsage, `avcheck predict: unknown solver "minisat" (want gini, z3 or cvc5)`},
		{"bad window", []string{"-window=0", bad}, exitUsage, "avcheck predict: -window 0: want a positive number of events"},
		{"bad budget", []string{"-budget=-1s", bad}, exitUsage, "avcheck predict: -budget -1s: want a positive duration"},
		{"wrong format", []string{"-format=native", bad}, exitError, "trace.txt: *"},
		{"directory", []string{t.TempDir()}, exitError, "avcheck predict: *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runPredictTest(tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			first, _, _ := strings.Cut(errOut, "\n")
			if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
				t.Errorf("stderr looks like a crash: %q", errOut)
			}
			if w, ok := strings.CutSuffix(tt.want, "*"); ok {
				if !strings.HasPrefix(first, w) {
					t.Errorf("stderr %q, want prefix %q", first, w)
				}
			} else if first != tt.want {
				t.Errorf("stderr %q, want %q", first, tt.want)
			}
		})
	}
}

// Flags may follow the file; a trace with a header and no events is
// predicted on (nothing to report), and standard error says it is empty.
func TestPredictFlagsAfterFileAndNoEvents(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	code, out, errOut := runPredictTest(p, "-json", "-precise=false")
	if code != exitFindings || !strings.HasPrefix(out, "{") || errOut != "" {
		t.Errorf("FILE -json -precise=false: exit %d, stdout %.40q, stderr %q; want JSON and exit %d", code, out, errOut, exitFindings)
	}
	dash := filepath.Join(t.TempDir(), "-trace.txt")
	if err := os.WriteFile(dash, []byte(serialCounter), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runPredictTest("-precise=false", "--", dash); code != exitFindings {
		t.Errorf("-- %s: exit %d, stderr %q", dash, code, errOut)
	}

	empty := writeTemp(t, "empty.txt", "avtrace 1\n")
	for _, mode := range []string{"-mode=predict", "-mode=observed"} {
		code, out, errOut := runPredictTest(mode, empty)
		if want := "avcheck predict: " + empty + ": the trace has no events\n"; code != exitClean || out != "" || errOut != want {
			t.Errorf("%s on a trace without events: exit %d, stdout %q, stderr %q; want exit 0 and %q", mode, code, out, errOut, want)
		}
	}
}

// A text trace is read as one whatever the length of the comments
// before its header.
func TestPredictLongPreamble(t *testing.T) {
	preamble := strings.Repeat("# a description of the run that this trace records, at some length\n", 2000)
	p := writeTemp(t, "trace.txt", preamble+serialCounter)
	code, out, errOut := runPredictTest("-precise=false", p)
	if code != exitFindings || errOut != "" || !strings.Contains(out, "c.go:3:2: c.n: g1 reads then writes c.n in one region") {
		t.Errorf("exit %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}
}

func TestPredictHelp(t *testing.T) {
	code, out, errOut := runPredictTest("-h")
	if code != exitClean {
		t.Errorf("exit %d", code)
	}
	for _, w := range []string{"usage: avcheck predict", "-json", "-all", "-mode", "-engine", "-format", "-precise", "-solver", "-window", "-budget", "Exit status"} {
		if !strings.Contains(out+errOut, w) {
			t.Errorf("help lacks %q", w)
		}
	}
}

// Observed mode reads the trace in one pass: an error still comes as one
// line naming the file and the position, with nothing on stdout.
func TestPredictObservedBadInput(t *testing.T) {
	malformed := writeTemp(t, "trace.txt", "avtrace 1\ng1 fork g2\ng1 rdd x\n")
	invalid := writeTemp(t, "bad.txt", "avtrace 1\ng1 fork g2\ng1 rel mu\n")
	tests := []struct {
		path, want string
	}{
		{malformed, `trace.txt:3: unknown event kind "rdd"`},
		{invalid, invalid + ": event 1 (g1 rel mu): release of mu, which is not locked"},
	}
	for _, tt := range tests {
		for _, mode := range []string{"-mode=observed", "-mode=predict"} {
			code, out, errOut := runPredictTest(mode, tt.path)
			if code != exitError || out != "" || errOut != tt.want+"\n" {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want exit %d and %q", mode, filepath.Base(tt.path), code, out, errOut, exitError, tt.want)
			}
		}
	}
}

// Observed mode's report and statistics name the sites and objects of the
// cycle it found, as read from the file.
func TestPredictObservedCycle(t *testing.T) {
	p := writeTemp(t, "trace.txt", `avtrace 1
g1 fork g2
g1 begin region=1.1
g1 rd c.n @c.go:3:2 region=1.1
g2 wr c.n @c.go:9:2
g1 wr c.n @c.go:4:2 region=1.1
g1 finish region=1.1
`)
	code, out, errOut := runPredictTest("-mode=observed", "-json", p)
	if code != exitFindings {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var doc struct {
		Findings []struct {
			Variable string
			Accesses []struct {
				File string
				Line int
			}
		}
		Stats struct{ Events, Goroutines, Variables int }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) != 1 || doc.Findings[0].Variable != "c.n" {
		t.Fatalf("findings %+v", doc.Findings)
	}
	var lines []int
	for _, a := range doc.Findings[0].Accesses {
		if a.File != "c.go" && a.File != "" {
			t.Errorf("access in %q", a.File)
		}
		lines = append(lines, a.Line)
	}
	if st := doc.Stats; st.Events != 6 || st.Goroutines != 2 || st.Variables != 1 {
		t.Errorf("stats %+v, want 6 events, 2 goroutines, 1 variable", st)
	}
	// The transaction is named by its begin event, which has no site.
	if !slices.Equal(lines, []int{0, 9, 4}) {
		t.Errorf("access lines %v, want [0 9 4]", lines)
	}
}

// TestPredictRestoresCollector runs predictions at once, as concurrent
// tests may, and checks that the collector settings predictMain changes
// while it runs (the collector off while reading, a memory limit after)
// are the caller's again when they return, whatever their order.
func TestPredictRestoresCollector(t *testing.T) {
	const percent, limit = 77, 1 << 40
	defer debug.SetGCPercent(debug.SetGCPercent(percent))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	p := writeTemp(t, "trace.txt", serialCounter)
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() { codes[i], _, _ = runPredictTest("-json", p) })
	}
	wg.Wait()
	for i, code := range codes {
		if code != exitFindings {
			t.Errorf("prediction %d: exit %d, want %d", i, code, exitFindings)
		}
	}
	if got := debug.SetGCPercent(percent); got != percent {
		t.Errorf("GOGC is %d after the predictions, want %d", got, percent)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("the memory limit is %d after the predictions, want %d", got, limit)
	}
}

// TestLimitHeapGrowthKeepsLowerLimit checks that a call of limitHeapGrowth
// made while another one's limit is in force never raises the memory limit
// above the one in force before the first call.
func TestLimitHeapGrowthKeepsLowerLimit(t *testing.T) {
	// As if a first call had saved a limit of 128 MB and set 64 MB: the
	// second call's own limit, at least 256 MB above the memory in use,
	// is higher than both, but must not go above 128 MB.
	const before, first = 128 << 20, 64 << 20
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(first))
	gcSettings.Lock()
	limiting, limit := gcSettings.limiting, gcSettings.limit
	gcSettings.limiting, gcSettings.limit = 1, before
	gcSettings.Unlock()
	defer func() {
		gcSettings.Lock()
		gcSettings.limiting, gcSettings.limit = limiting, limit
		gcSettings.Unlock()
	}()
	restore := limitHeapGrowth()
	got := debug.SetMemoryLimit(-1)
	restore()
	if got != before {
		t.Errorf("the memory limit is %d during the second call, want %d", got, before)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("the memory limit is %d after the second call, want %d", got, before)
	}
}

// TestFollowLiveHeap checks that the memory limit limitHeapGrowth set
// rises to a quarter above the live heap (at least 256 MB above) when a
// collection finds the live heap past it, so that the collector does not
// run without pause, and not above the limit before the first call.
func TestFollowLiveHeap(t *testing.T) {
	const before = 1 << 40
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1)) // far below the live heap
	gcSettings.Lock()
	limiting, limit := gcSettings.limiting, gcSettings.limit
	gcSettings.limiting, gcSettings.limit, gcSettings.following = 1, before, true
	gcSettings.Unlock()
	defer func() {
		gcSettings.Lock()
		gcSettings.limiting, gcSettings.limit = limiting, limit
		gcSettings.Unlock()
	}()
	followLiveHeap()
	if got := debug.SetMemoryLimit(-1); got < 256<<20 || got >= before {
		t.Errorf("the memory limit is %d after a collection, want at least 256 MB and under %d", got, int64(before))
	}
}

// Positions name files as go vet does: relative to the current directory
// where that is shorter, "../" included, otherwise absolute.
func TestPredictPaths(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	here := filepath.Join(wd, "c.go")
	parent := filepath.Join(filepath.Dir(wd), "p.go")
	far := "/z.go"
	p := writeTemp(t, "trace.txt", strings.NewReplacer("@c.go:3:2", "@"+here+":3:2", "@c.go:4:2", "@"+parent+":4:2", "@c.go:9:2", "@"+far+":9:2").Replace(serialCounter))
	code, out, errOut := runPredictTest("-precise=false", p)
	if code != exitFindings {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"c.go:3:2: c.n: g1 reads then writes c.n in one region",
		"\t/z.go:9:2: g2 writes c.n (interleaved)",
		"\t../p.go:4:2: g1 writes c.n (last)",
		"\t\tg2 /z.go:9:2 wr c.n",
	} {
		if !strings.Contains(out, "\n"+want) && !strings.HasPrefix(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestPredictInterrupted: a prediction stopped before it decided anything
// shows nothing and says so, with exit status 1.
func TestPredictInterrupted(t *testing.T) {
	p := writeTemp(t, "trace.txt", serialCounter)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := predictContext(ctx, false, []string{p}, &out, &errOut)
	if want := "avcheck predict: interrupted while searching the trace for violations, before any was decided\n"; code != exitError || out.String() != "" || errOut.String() != want {
		t.Errorf("exit %d, stdout %q, stderr %q, want %q", code, out.String(), errOut.String(), want)
	}
}

// TestPredictWriteInterrupted: the report is written through a writer
// that fails once its context is done, so that an interrupt stops a long
// report where it is; the error is errInterrupted, and nothing more is
// written.
func TestPredictWriteInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var b bytes.Buffer
	w := interruptible{ctx, &b}
	if _, err := w.Write([]byte("x")); err != nil || b.String() != "x" {
		t.Fatalf("before the interrupt: %v, wrote %q", err, b.String())
	}
	cancel()
	for name, write := range map[string]func() error{
		"JSON":  func() error { return report.JSON(w, &trace.Trace{}, nil, report.Stats{}) },
		"SARIF": func() error { return report.SARIF(w, &trace.Trace{}, nil, report.SARIFOptions{}) },
	} {
		if err := write(); !errors.Is(err, errInterrupted) {
			t.Errorf("%s after the interrupt: %v, want %v", name, err, errInterrupted)
		}
	}
	if b.String() != "x" {
		t.Errorf("after the interrupt, wrote %q", b.String())
	}
}
