package record

import (
	"bytes"
	"context"
	"fmt"
	"go/version"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/record/avrt"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// prepareInstrumented plans and builds a program of testdata/record for
// the instrumenting recorder.
func prepareInstrumented(tb testing.TB, name string, isMain bool) (*Instrumented, string, string) {
	tb.Helper()
	return prepareInstrumentedPkg(tb, "./testdata/record/"+name, isMain)
}

// prepareInstrumentedPkg is prepareInstrumented for any package of the
// module.
func prepareInstrumentedPkg(tb testing.TB, pkg string, isMain bool) (*Instrumented, string, string) {
	tb.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		tb.Fatal(err)
	}
	plan, err := MakePlan(PlanOptions{Dir: root, Pattern: pkg})
	if err != nil {
		tb.Fatal(err)
	}
	bin, in, cleanup, err := BuildInstrumented(context.Background(), root, pkg, isMain, plan)
	tb.Cleanup(cleanup)
	if err != nil {
		tb.Fatal(err)
	}
	return in, bin, root
}

// recordInstrumentedOK runs a binary that BuildInstrumented built and
// returns its trace, failing the test unless the run ended normally
// with a valid trace; out, if not nil, gets the program's output.
func recordInstrumentedOK(tb testing.TB, in *Instrumented, opts Options) *trace.Trace {
	tb.Helper()
	var out strings.Builder
	if opts.Output == nil {
		opts.Output = &out
	}
	tr, oc, err := RecordInstrumented(context.Background(), in, opts)
	if err != nil {
		tb.Fatal(err)
	}
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		tb.Fatalf("outcome %+v\n%s", oc, out.String())
	}
	if err := trace.Validate(tr); err != nil {
		tb.Fatal(err)
	}
	return tr
}

// recordTestdata builds the test of testdata/record/name with the
// instrumenting recorder and records its run in the package's directory.
func recordTestdata(t *testing.T, name string) *trace.Trace {
	t.Helper()
	in, bin, root := prepareInstrumented(t, name, false)
	return recordInstrumentedOK(t, in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record", name)})
}

// noFindings fails t if prediction finds anything in tr.
func noFindings(t *testing.T, tr *trace.Trace) {
	t.Helper()
	if got := findings(tr); len(got) > 0 {
		t.Errorf("findings:\n%s", strings.Join(got, "\n"))
	}
}

// The instrumented loop program records what the Delve recorder does of
// it: every increment's two critical sections, in a valid trace.
func TestInstrumentedLoop(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "loop", true)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Args: []string{"50"}, Dir: root})
	counts := make(map[string]int)
	for _, e := range tr.Events {
		k := e.Kind.String()
		if e.Kind.IsAccess() {
			k += " " + tr.Object(e.Obj).Name
		}
		counts[k]++
	}
	// Two goroutines, 50 increments each, two critical sections each.
	for k, want := range map[string]int{
		"acq": 200, "rel": 200, "rd c.n": 100, "wr c.n": 100,
		"fork": 3, "wgadd": 2, "wgdone": 2, "wgwait": 1,
	} {
		if counts[k] != want {
			t.Errorf("%d %s events, want %d", counts[k], k, want)
		}
	}
	// A worker's end follows its deferred wg.Done, so main's Wait may
	// return and the program exit before the worker returns: its end is
	// recorded or not, as the scheduler has it.
	if n := counts["end"]; n > 2 {
		t.Errorf("%d end events, want at most 2", n)
	}
}

// A program's positions stay its own: the rewritten copy keeps every line
// where it was, so a panic's stack names the user's file and line.
func TestInstrumentedPositions(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "crash", false)
	var out strings.Builder
	_, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record/crash"), Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	if oc.Status != 2 {
		t.Fatalf("outcome %+v, want exit status 2", oc)
	}
	if !strings.Contains(out.String(), "crash_test.go:35") {
		t.Errorf("the panic's stack does not name crash_test.go:35:\n%s", out.String())
	}
	// No rewritten file is left in the user's tree.
	for _, f := range in.Files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), rtName) {
			t.Errorf("%s was changed", f)
		}
	}
}

// BenchmarkInstrumented measures the instrumenting recorder on the loop
// program: events/s is the events the runtime records per second of the
// program's run, slowdown that run's time over the same program's built
// normally, and convert-events/s the speed of turning the raw events into
// the trace afterwards.
func BenchmarkInstrumented(b *testing.B) { benchInstrumented(b, "loop", "100000") }

// BenchmarkInstrumentedChannels is BenchmarkInstrumented on the ping-pong
// program: two goroutines pass a ball back and forth over channels.
func BenchmarkInstrumentedChannels(b *testing.B) { benchInstrumented(b, "pingpong", "100000") }

// BenchmarkInstrumentedAllocs is BenchmarkInstrumented on a program that
// makes a small object in each iteration: an allocation's event and its
// conversion (avrt.Made, varIDs).
func BenchmarkInstrumentedAllocs(b *testing.B) { benchInstrumented(b, "allocs", "300000") }

func benchInstrumented(b *testing.B, name, arg string) {
	in, bin, root := prepareInstrumented(b, name, true)
	plain := filepath.Join(b.TempDir(), name)
	build := exec.Command("go", "build", "-o", plain, "./testdata/record/"+name)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building %s: %v\n%s", name, err, out)
	}
	// The raw events go where RecordInstrumented puts them, or to
	// RAWDIR.
	dir := os.Getenv("RAWDIR")
	if dir == "" {
		dir = eventsDir(DefaultMaxEvents)
	}
	raw, err := createEvents(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(raw)
	events := 0
	var recorded, running, converting time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, arg)
		cmd.Env = append(os.Environ(), avrt.EnvFile+"="+raw)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("running %s instrumented: %v\n%s", name, err, out)
		}
		recorded += time.Since(start)
		start = time.Now()
		tr, co, err := in.convert(raw)
		if err != nil || co.Invalid != "" {
			b.Fatalf("converting: %v %s", err, co.Invalid)
		}
		converting += time.Since(start)
		events += len(tr.Events)
		start = time.Now()
		if err := exec.Command(plain, arg).Run(); err != nil {
			b.Fatalf("running %s: %v", name, err)
		}
		running += time.Since(start)
	}
	b.ReportMetric(float64(events)/recorded.Seconds(), "events/s")
	b.ReportMetric(recorded.Seconds()/running.Seconds(), "slowdown")
	b.ReportMetric(float64(events)/converting.Seconds(), "convert-events/s")
}

// BenchmarkInstrumentedMemory records a long run of the lock loop,
// about 100M events, and reports the recorded program's peak resident
// memory beside the same program's built normally (the runtime's memory:
// its chunks of the events' file are mapped while they fill and unmapped
// after), the raw events' size, and the memory that reading them back in
// the order of their sequence numbers allocates (the converter's
// streaming reader, without the trace it builds for the prediction).
func BenchmarkInstrumentedMemory(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("no /proc to read a process's peak memory from")
	}
	const arg = "3600000"
	_, bin, root := prepareInstrumented(b, "loop", true)
	plain := filepath.Join(b.TempDir(), "loop")
	build := exec.Command("go", "build", "-o", plain, "./testdata/record/loop")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building loop: %v\n%s", err, out)
	}
	dir := os.Getenv("RAWDIR")
	if dir == "" {
		dir = eventsDir(200_000_000)
	}
	for b.Loop() {
		raw, err := createEvents(dir)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, arg)
		cmd.Env = append(os.Environ(), avrt.EnvFile+"="+raw, avrt.EnvLimit+"=200000000")
		recorded := peakRSS(b, cmd)
		normal := peakRSS(b, exec.Command(plain, arg))
		fi, err := os.Stat(raw)
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(raw)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		events := 0
		err = readRaw(f, func(avrt.Event) bool { events++; return true })
		runtime.ReadMemStats(&after)
		f.Close()
		os.Remove(raw)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(events), "events")
		b.ReportMetric(float64(recorded)/(1<<20), "recorded-rss-MB")
		b.ReportMetric(float64(normal)/(1<<20), "normal-rss-MB")
		b.ReportMetric(float64(fi.Size())/(1<<20), "raw-MB")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "read-alloc-MB")
	}
}

// peakRSS runs cmd and returns its peak resident memory in bytes, the
// last VmHWM that /proc showed while it ran (the rusage of a child
// started from a large process counts the parent's memory at the fork).
func peakRSS(tb testing.TB, cmd *exec.Cmd) int64 {
	tb.Helper()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				tb.Fatalf("%s: %v", cmd.Path, err)
			}
			return peak
		case <-tick.C:
			data, err := os.ReadFile(status)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(data), "\n") {
				var kb int64
				if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil && kb*1024 > peak {
					peak = kb * 1024
				}
			}
		}
	}
}

// The instrumenting recorder compiles and records the recorder's test
// programs for each kind of synchronisation: every run ends normally
// with a trace that is a possible execution, cut short by no event.
func TestInstrumentedPrograms(t *testing.T) {
	for _, name := range []string{"chanselect", "chanclose", "chanbuffered", "chantoken", "condwait", "oncelazy", "wggo", "mapelems", "atomics", "guards"} {
		t.Run(name, func(t *testing.T) {
			program := name == "mapelems" || name == "guards" // main packages without tests
			in, bin, root := prepareInstrumented(t, name, program)
			tr, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record", name)})
			if err != nil {
				t.Fatal(err)
			}
			if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
				t.Fatalf("outcome %+v", oc)
			}
			if err := trace.Validate(tr); err != nil {
				t.Fatal(err)
			}
			if len(in.Unrewritten) > 0 {
				t.Errorf("files not rewritten: %v", in.Unrewritten)
			}
			accesses := 0
			for _, e := range tr.Events {
				if e.Kind.IsAccess() {
					accesses++
				}
			}
			if accesses == 0 {
				t.Errorf("no access recorded")
			}
		})
	}
}

// The instrumenting recorder records the accesses that sends, closes and
// atomic operations make as the Delve recorder does (shadow.go).
func TestInstrumentedShadowAccesses(t *testing.T) {
	for _, tc := range shadowCases {
		t.Run(tc.name, func(t *testing.T) {
			in, bin, root := prepareInstrumented(t, tc.name, false)
			tr, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record", tc.name)})
			if err != nil {
				t.Fatal(err)
			}
			if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
				t.Fatalf("outcome %+v", oc)
			}
			checkShadow(t, tr, tc.want)
		})
	}
}

// The instrumenting recorder's traces keep the model's rule for channels:
// a goroutine goes on after the send of message k on a channel of
// capacity n only after receive k-n (a rendezvous if n is 0). A trace
// that breaks it (a buffered channel declared unbuffered, a sender
// recorded going on before the probe of the receive it waited for) has
// no run, and the precise stage finds its synchronisation in a cycle.
func TestInstrumentedSendsWaitForReceives(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps map[string]int // the capacity of channels by name
		args []string       // a main package's arguments
	}{
		{"chanbuffered", map[string]int{"chan@buffered_test.go:13": 2}, nil},
		{"chanclose", map[string]int{"chan@closing_test.go:11": 4}, nil},
		{"chantoken", map[string]int{"chan@token_test.go:12": 0}, nil},
		{"pingpong", map[string]int{"chan@main.go:38": 0, "chan@main.go:43": 0}, []string{"200"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, bin, root := prepareInstrumented(t, tc.name, tc.args != nil)
			tr, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Args: tc.args, Dir: filepath.Join(root, "testdata/record", tc.name)})
			if err != nil {
				t.Fatal(err)
			}
			if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
				t.Fatalf("outcome %+v", oc)
			}
			seen := make(map[string]bool)
			for id, o := range tr.Objects {
				if want, ok := tc.caps[o.Name]; ok && o.Kind == trace.ObjChan {
					seen[o.Name] = true
					if o.Cap != want {
						t.Errorf("channel %s (%#x) declared with capacity %d, want %d", o.Name, uint64(id), o.Cap, want)
					}
				}
			}
			for name := range tc.caps {
				if !seen[name] {
					t.Errorf("no channel %s in the trace", name)
				}
			}
			for _, v := range sendsGoOnEarly(tr) {
				t.Error(v)
			}
		})
	}
}

// sendsGoOnEarly lists the sends whose goroutine's next event comes
// before the receive the send waits for.
func sendsGoOnEarly(tr *trace.Trace) []string {
	recv := make(map[[2]uint64]int) // channel and message → the receive's index
	for i, e := range tr.Events {
		if e.Kind == trace.KindRecv && e.Arg > 0 {
			recv[[2]uint64{uint64(e.Obj), e.Arg}] = i
		}
	}
	var out []string
	last := make(map[trace.GoID]int) // a goroutine's previous event
	for i, e := range tr.Events {
		p, ok := last[e.G]
		last[e.G] = i
		if !ok || tr.Events[p].Kind != trace.KindSend {
			continue
		}
		s := tr.Events[p]
		n := uint64(tr.Object(s.Obj).Cap)
		if s.Arg <= n {
			continue
		}
		if r, ok := recv[[2]uint64{uint64(s.Obj), s.Arg - n}]; !ok || r > i {
			out = append(out, fmt.Sprintf("g%d goes on at event %d after sending message %d on %s (capacity %d) before receive %d (event %d, %v)",
				s.G, i, s.Arg, tr.Object(s.Obj).Name, n, s.Arg-n, r, ok))
		}
	}
	return out
}

// A module whose go line is older than the Go that builds it keeps its
// language when instrumented: its loop variables are shared by the
// iterations, as before Go 1.22, so the test passes only if its files
// were not given a version past 1.21. The rewritten code calls the
// runtime's generic functions (with interface{} for comparable where a
// map's keys are interfaces, which Go 1.20 allows): each rewritten file
// says go1.21 in a //go:build line, its own if it has one, its // +build
// lines emptied (go vet, which go test runs, would refuse them), and
// keeps its lines (runtime.Caller's line is the source's). The go line
// stays: an old module does not list in its go.mod the modules its
// dependencies require (here b, which a requires), which Go 1.17 and
// later ask for.
func TestInstrumentedOldGoLine(t *testing.T) {
	files := map[string]string{
		"old.go": `package old

import (
	"runtime"
	"sync"

	"example.com/a"
)

var (
	mu sync.Mutex
	n  int
)

// Run reports whether the loop variables were shared and the lines kept.
func Run() bool {
	var fs []func() int
	for i := 0; i < 3; i++ {
		fs = append(fs, func() int { return i })
	}
	var wg sync.WaitGroup
	for _, inc := range []func(){incTagged, incPlus, incBoth} {
		wg.Add(1)
		go func(inc func()) {
			defer wg.Done()
			inc()
		}(inc)
	}
	wg.Wait()
	seen := make(map[interface{}]int)
	seen[n]++
	_, _, line, _ := runtime.Caller(0)
	return fs[0]() == 3 && n == 3 && seen[3] == 1 && a.Twice(1) == 2 && line == 32
}
`,
		"old_test.go": `package old

import "testing"

func TestRun(t *testing.T) {
	if !Run() {
		t.Fatal("loop variables not shared, or a line moved")
	}
}
`,
		"tagged.go": `//go:build !avcheck_never

package old

import "runtime"

// counts is a map type, made through its address.
type counts map[string]int

func incTagged() {
	mu.Lock()
	n++
	mu.Unlock()
	c := &counts{}
	if len(*c) != 0 {
		panic("not empty")
	}
	if _, _, line, _ := runtime.Caller(0); line != 18 {
		panic("line moved")
	}
}
`,
		"plus.go": `// +build !avcheck_never

package old

func incPlus() {
	mu.Lock()
	n++
	mu.Unlock()
}
`,
		"both.go": `//go:build !avcheck_never && !avcheck_either
// +build !avcheck_never,!avcheck_either

package old

func incBoth() {
	mu.Lock()
	n++
	mu.Unlock()
}
`,
		"a/go.mod": "module example.com/a\n\ngo 1.12\n\nrequire example.com/b v0.0.0\n",
		"a/a.go":   "package a\n\nimport \"example.com/b\"\n\nfunc Twice(x int) int { return b.Add(x, x) }\n",
		"b/go.mod": "module example.com/b\n\ngo 1.12\n",
		"b/b.go":   "package b\n\nfunc Add(x, y int) int { return x + y }\n",
	}
	module := func(goLine string) string {
		dir := t.TempDir()
		files := maps.Clone(files)
		mod := "module example.com/old\n\ngo " + goLine + "\n\nrequire example.com/a v0.0.0\n\nreplace example.com/a => ./a\n\nreplace example.com/b => ./b\n"
		if version.Compare("go"+goLine, "go1.17") >= 0 {
			mod += "\nrequire example.com/b v0.0.0 // indirect\n"
		}
		files["go.mod"] = mod
		for name, data := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}

	for _, goLine := range []string{"1.21", "1.20", "1.18", "1.15", "1.12"} {
		dir := module(goLine)
		plan, err := MakePlan(PlanOptions{Dir: dir, Pattern: "."})
		if err != nil {
			t.Fatal(err)
		}
		bin, in, cleanup, err := BuildInstrumented(context.Background(), dir, ".", false, plan)
		t.Cleanup(cleanup)
		if err != nil {
			t.Fatalf("go %s: %v", goLine, err)
		}
		if len(in.Files) != 5 || len(in.Unrewritten) > 0 {
			t.Errorf("go %s: files rewritten %q, not rewritten %q, want all 5 rewritten", goLine, in.Files, in.Unrewritten)
		}
		var output bytes.Buffer
		tr, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: dir, Output: &output})
		if err != nil {
			t.Fatal(err)
		}
		if !oc.Complete || oc.Status != 0 {
			t.Fatalf("go %s: %s; want exit status 0 (the loop variables shared, as before Go 1.22, and the lines kept); its output:\n%s", goLine, oc.Message, output.Bytes())
		}
		writes := 0
		for _, e := range tr.Events {
			if e.Kind == trace.KindWrite && tr.Object(e.Obj).Name == "n" {
				writes++
			}
		}
		if writes != 3 {
			t.Errorf("go %s: %d writes of n recorded, want 3", goLine, writes)
		}
	}
}

// The instrumenting recorder stops recording at Options.MaxEvents: the
// program runs to its end, the trace is its run up to the cut, valid,
// and the outcome says so.
func TestInstrumentedMaxEvents(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "loop", true)
	run := func(max int64) (*trace.Trace, Outcome) {
		tr, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Args: []string{"20000"}, Dir: root, MaxEvents: max})
		if err != nil {
			t.Fatal(err)
		}
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
			t.Fatalf("outcome %+v", oc)
		}
		if err := trace.Validate(tr); err != nil {
			t.Fatal(err)
		}
		return tr, oc
	}
	whole, oc := run(0)
	if oc.Cut != "" {
		t.Fatalf("a run within the default bound was cut: %s", oc.Cut)
	}
	cut, oc := run(avrt.ChunkEvents)
	if !strings.Contains(oc.Cut, "the recording stopped at its limit of about 16384 probe events (-max-events), of which the trace keeps ") {
		t.Errorf("outcome's cut %q, want the limit", oc.Cut)
	}
	// The runtime maps no more chunks once it has recorded the limit's
	// events; each P's buffer is a chunk, so the trace holds at most a
	// chunk per P more, and a few events the converter adds.
	if n := len(cut.Events); n == 0 || n >= len(whole.Events) || n > (runtime.GOMAXPROCS(0)+1)*avrt.ChunkEvents {
		t.Errorf("%d events recorded with the bound, %d without", n, len(whole.Events))
	}
}

// An atomic add in a defer statement runs when the function returns in
// the instrumented build too: it is left unrecorded rather than moved
// to the statement, and counted.
func TestInstrumentedDeferredAtomic(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "deferatomic", false)
	var out strings.Builder
	_, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: root, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	if !oc.Complete || oc.Status != 0 {
		t.Fatalf("outcome %+v\n%s", oc, out.String())
	}
	if in.Deferred != 2 {
		t.Errorf("%d deferred atomic operations counted, want 2", in.Deferred)
	}
}

// A test that starts copies of its own binary (testdata/record/reexec)
// is recorded alone: the copies do not inherit the recording, which they
// would reopen and truncate under the test's mapping. The trace holds
// the test's own 4 acquires of the counter's lock, not the copies' 400.
func TestInstrumentedReexec(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "reexec", false)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record/reexec")})
	acquires := 0
	for _, e := range tr.Events {
		if e.Kind == trace.KindAcquire && tr.Object(e.Obj).Name == "c.mu" {
			acquires++
		}
	}
	if acquires != 4 {
		t.Errorf("%d acquires of c.mu recorded, want 4", acquires)
	}
}

// A channel or Once that the runtime places where a collected one was is
// a new object for the instrumenting recorder too: the make of a channel
// is recorded, the context package's making of a Done channel too, and a
// Once that runs its function where one ran is another Once.
func TestInstrumentedReuse(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "reuse", true)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Args: []string{"4"}, Dir: root})
	count := map[string]int{}
	objs := map[trace.ObjID]bool{}
	for _, e := range tr.Events {
		if e.Kind == trace.KindClose || e.Kind == trace.KindOnceDo && e.Arg == 1 {
			count[e.Kind.String()]++
			objs[e.Obj] = true
			if tr.Object(e.Obj).Name == "" {
				t.Errorf("%v: object %#x is not declared", e, e.Obj)
			}
		}
	}
	if count["close"] != 8 || count["once"] != 4 {
		t.Errorf("%d closes and %d Do running the function, want 8 and 4", count["close"], count["once"])
	}
	if len(objs) != 12 {
		t.Errorf("%d objects closed or run, want 12", len(objs))
	}
	if fs := findings(tr); len(fs) != 0 {
		t.Errorf("%d findings, want none: %v", len(fs), fs)
	}
}

// A goroutine that waits on <-ctx.Done() is ordered after the work done
// before cancel() (testdata/record/ctxcancel): the rewritten
// context.WithCancel, WithTimeout and WithCancelCause give a cancel
// function that records the close of the Done channel, and of the
// children's (TestCancelParent); the function context.AfterFunc starts
// records the receive it follows (TestAfterFunc); a parent of the
// program's own type is given to the context package behind a wrapper
// whose Err records the receive of the package's goroutine, and the
// closes of the children it cancels (TestChildOfManual). The receive
// from ctx.Done() is recorded as any other. Without them, each test's
// two writes of b.V are a race.
func TestInstrumentedContext(t *testing.T) {
	tr := recordTestdata(t, "ctxcancel")
	closes, recvs := map[string]int{}, map[string]int{}
	for _, e := range tr.Events {
		s := tr.Site(e.Site)
		at := fmt.Sprintf("%s:%d", filepath.Base(s.File), s.Line)
		switch e.Kind {
		case trace.KindClose:
			closes[at]++
		case trace.KindRecv:
			recvs[at]++
		}
	}
	// One close per cancel, at the context's making; TestCancelParent's
	// cancel closes the child too (line 49, made at 50); TestAfterFunc
	// closes its own channel at 66; Manual.Cancel closes its channel
	// (ctx.go:53), and the package's goroutine the child's (line 77);
	// TestCancelForms's two contexts are cancelled (lines 94 and 99).
	wantCloses := map[string]int{
		"ctx_test.go:11": 1, "ctx_test.go:21": 1, "ctx_test.go:36": 1,
		"ctx_test.go:49": 1, "ctx_test.go:50": 1,
		"ctx_test.go:61": 1, "ctx_test.go:66": 1,
		"ctx.go:53": 1, "ctx_test.go:77": 1,
		"ctx_test.go:94": 1, "ctx_test.go:99": 1,
	}
	if !maps.Equal(closes, wantCloses) {
		t.Errorf("closes recorded at %v, want %v", closes, wantCloses)
	}
	// The receives the wrappers record: the start of TestAfterFunc's
	// function, at the call of AfterFunc (line 64), and the package's
	// goroutine's from Manual's Done channel, at the child's making.
	for _, at := range []string{"ctx_test.go:64", "ctx_test.go:77"} {
		if recvs[at] == 0 {
			t.Errorf("no receive recorded at %s; receives at %v", at, recvs)
		}
	}
	noFindings(t, tr)
}

// Objects that the allocator makes at the addresses of objects the
// garbage collector freed are new objects (testdata/record/allocreuse):
// the rewritten &T{...}, new(T), make([]T, n), make(map[K]V) and map
// literals record the memory they return (avrt.Made, MadeSlice,
// MadeMap), and the converter gives the variables in it new ids, and a
// new map's elements and contents too (without MadeMap, 2 findings and 2
// or 5 variables of each map's, not 8). So do append, when it grows a
// slice into a new array (avrt.Appended; without it, 1 finding and 5
// variables, not 16), slice literals and conversions of strings to
// slices (without them, 2 findings and 4 and 2 variables, not 8). Without them, the second worker's boxes are the
// first's, whose variables it writes (2 of each, not 8), and 28 races
// and violations are predicted between the workers. The variable b that
// each round declares and its goroutine captures is new memory too.
func TestInstrumentedAllocReuse(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "allocreuse", true)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Args: []string{"4"}, Dir: root})
	written := map[string]map[trace.ObjID]bool{}
	captured := map[trace.ObjID]bool{} // the variables b that the rounds' goroutines read
	for _, e := range tr.Events {
		if s := tr.Site(e.Site); e.Kind == trace.KindRead && filepath.Base(s.File) == "main.go" && s.Line == 62 && tr.Object(e.Obj).Name == "b" {
			captured[e.Obj] = true
		}
		if e.Kind != trace.KindWrite {
			continue
		}
		name := tr.Object(e.Obj).Name
		if written[name] == nil {
			written[name] = map[trace.ObjID]bool{}
		}
		written[name][e.Obj] = true
	}
	// 4 rounds of each of the 2 workers make a box with 2 items and a
	// map, and a tally with a map (a literal), each map of one element:
	// a map made where a freed one was is another map (avrt.MadeMap),
	// its elements and contents other variables.
	for name, want := range map[string]int{"b.n": 8, "b.items[b.n]": 16, "t.sum": 8, "b.seen[v]": 8, "b.seen[*]": 8, "t.at[v]": 8, "t.at[*]": 8,
		// Each round's box grows its history twice, to 1 element then 2,
		// each time into a new array (avrt.Appended), and each tally's
		// slice literal and conversion of a string are new arrays
		// (MadeSlice).
		"b.hist[len(b.hist) - 1]": 16, "t.last[0]": 8, "t.name[0]": 8} {
		if got := len(written[name]); got != want {
			t.Errorf("%d variables %s written, want %d", got, name, want)
		}
	}
	// Each round's b := &box{...}, which its goroutine captures, is new
	// memory (freshVars), whatever variable of an ended round or of the
	// other worker had its address.
	if len(captured) != 8 {
		t.Errorf("the rounds' goroutines read %d variables b at main.go:51, want 8 (one per round)", len(captured))
	}
	if fs := findings(tr); len(fs) != 0 {
		t.Errorf("%d findings, want none:\n%s", len(fs), strings.Join(fs, "\n"))
	}
}

// An object that one goroutine puts in a sync.Pool and another gets back
// is ordered by the pool (testdata/record/poolreuse): the Put is recorded
// as a Cond's signal of the item and the Get that returns it as a wait
// (avrt.PoolPut, PoolGet), and the two goroutines' uses of the buffer,
// and the variable the first writes before its Put and the second reads
// after its Get, give no finding. Without them, 5 findings, one at
// filtered (a lost update of b.n).
func TestInstrumentedPoolReuse(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "poolreuse", true)
	// The program exits with status 2, which fails the test, if the
	// second goroutine's Get did not return the first's buffer.
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root})
	var puts, gets int
	for _, e := range tr.Events {
		if o := tr.Object(e.Obj); o.Kind == trace.ObjCond && strings.HasPrefix(o.Name, "item of ") {
			switch e.Kind {
			case trace.KindCondSignal:
				puts++
			case trace.KindCondWait:
				gets++
			}
		}
	}
	// Two Puts; the first Get returns what New made, which no Put
	// put: no event.
	if puts != 2 || gets != 1 {
		t.Errorf("%d Puts and %d Gets of pool items recorded, want 2 and 1", puts, gets)
	}
	noFindings(t, tr)
}

// A receive from a channel that a call returns (testdata/record/recvcall)
// is recorded by a wrapper that does it (avrt.RecvFrom, RecvFromOK): the
// call is not evaluated twice; in a select's case body too, though not
// in a case itself. The main goroutine's accesses after the
// receives are ordered after the worker's before its send and its close;
// without the wrappers, 8 findings, two of them lost updates at
// filtered.
func TestInstrumentedRecvCall(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "recvcall", true)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root})
	recvs := 0
	for _, e := range tr.Events {
		if s := tr.Site(e.Site); e.Kind == trace.KindRecv && filepath.Base(s.File) == "main.go" && (s.Line == 30 || s.Line == 32 || s.Line == 38) {
			recvs++
		}
	}
	if recvs != 3 {
		t.Errorf("%d receives recorded at main.go:30, 32 and 38, want 3", recvs)
	}
	noFindings(t, tr)
}

// A range with the index only over an array does not evaluate the
// array (testdata/record/rangearray): no read is recorded at the range
// statements, and the segments, each written under its own lock, give
// no finding. Without the rule, the range's read of c.segments races
// with every segment's write.
func TestInstrumentedRangeArray(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "rangearray", false)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record/rangearray")})
	for _, e := range tr.Events {
		if e.Kind != trace.KindRead {
			continue
		}
		if s := tr.Site(e.Site); filepath.Base(s.File) == "seg.go" && (s.Line == 28 || s.Line == 37) {
			t.Errorf("%v: a read recorded at the range of seg.go:%d", e, s.Line)
		}
	}
	noFindings(t, tr)
}

// The variables of a goroutine's own stack are not recorded
// (testdata/record/stackvars, where a closure that does not outlive its
// function captures one, and a named result is made through its
// methods): goroutines that end give their stacks to the next ones, and
// a stack that grows moves, so the jobs' variables would be one
// variable, written by each job's goroutine with no order between them:
// a race. No other goroutine can reach them. Neither recorder records
// them: the Delve recorder skips an address between the stopped
// goroutine's stack pointer and its outermost frame.
func TestInstrumentedStackVars(t *testing.T) {
	for _, recorder := range []string{"instrument", "delve"} {
		t.Run(recorder, func(t *testing.T) {
			tr := recordTests(t, recorder, "stackvars")
			written := map[string]int{"caught": 0, "b.begin": 0}
			for _, e := range tr.Events {
				if _, ok := written[tr.Object(e.Obj).Name]; ok && e.Kind.IsAccess() {
					written[tr.Object(e.Obj).Name]++
				}
			}
			if written["caught"] != 0 || written["b.begin"] != 0 {
				t.Errorf("accesses recorded of the stacks' variables: %v, want none", written)
			}
			noFindings(t, tr)
		})
	}
}

// A CompareAndSwap that did not swap is recorded as a load
// (testdata/record/casloop): the test's first try fails, the other
// goroutine having added between its load and its CompareAndSwap, and
// retries. Recorded as a read-modify-write, the failed try wrote over
// the other goroutine's update, and a lost update (R-W-W) was found in
// the recorded order itself.
func TestInstrumentedCompareAndSwap(t *testing.T) {
	tr := recordTestdata(t, "casloop")
	got := map[string]int{}
	for _, e := range tr.Events {
		if e.Kind.IsAccess() && tr.Object(e.Obj).Name == "c.n" {
			k := fmt.Sprintf("%s:%d %s", filepath.Base(tr.Site(e.Site).File), tr.Site(e.Site).Line, e.Kind)
			if e.Kind == trace.KindAtomicLoad && e.Flags&trace.Outside != 0 {
				k += " outside"
			}
			got[k]++
		}
	}
	// Three tries load (the failed one, its retry, the other
	// goroutine's), two swap, one fails: a load outside the region,
	// which gave the program no value; Count loads once. Each atomic
	// operation has its plain access beside it.
	want := map[string]int{
		"casloop.go:17 aload": 3, "casloop.go:17 rd": 3,
		"casloop.go:21 armw": 2, "casloop.go:21 wr": 2,
		"casloop.go:21 aload outside": 1, "casloop.go:21 rd": 1,
		"casloop.go:29 aload": 1, "casloop.go:29 rd": 1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("accesses of c.n %v, want %v", got, want)
	}
	noFindings(t, tr)
}

// A mutex that one goroutine locks and another unlocks, as Go allows
// (testdata/record/handover: a bus hands each handler's goroutine the
// lock its next publish waits for), is recorded to the end of the run,
// and orders the handlers: their appends to one slice, with no lock of
// their own, give no finding. Recording used to stop at the first such
// unlock as an impossible event.
func TestInstrumentedLockHandover(t *testing.T) {
	tr := recordTestdata(t, "handover")
	locks, unlocks := 0, 0
	for _, e := range tr.Events {
		if tr.Object(e.Obj).Name != "b.mu" {
			continue
		}
		switch e.Kind {
		case trace.KindAcquire:
			locks++
		case trace.KindRelease:
			unlocks++
		}
	}
	if locks != 3 || unlocks != 3 {
		t.Errorf("b.mu locked %d times and unlocked %d, want 3 and 3", locks, unlocks)
	}
	noFindings(t, tr)
}

// A loop's condition is recorded each time it is tested, the last
// (false) time included, and its post statement each time it runs
// (testdata/record/forcond: four iterations, two left by continue).
// They were recorded before the loop and at the start of each
// iteration: the first test twice, the last never, and the post
// statement once before it had run.
func TestInstrumentedLoopCondition(t *testing.T) {
	tr := recordTestdata(t, "forcond")
	var got []string
	for _, e := range tr.Events {
		if name := tr.Object(e.Obj).Name; e.Kind.IsAccess() && (name == "l.n" || name == "l.step") {
			got = append(got, fmt.Sprintf("%s %s %d", e.Kind, name, tr.Site(e.Site).Line))
		}
	}
	want := []string{"rd l.n 14"}
	for range 4 {
		want = append(want, "rd l.n 15", "wr l.n 15", "rd l.step 14", "rd l.n 14")
	}
	if !slices.Equal(got, want) {
		t.Errorf("accesses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTrailingComma(t *testing.T) {
	for text, want := range map[string]bool{
		"":                              false,
		"\n":                            false,
		",\n":                           true,
		" // a comment, with a comma\n": false,
		", // a comment\n":              true,
		" /* a, b */ ":                  false,
		" /* a, b */ ,\n":               true,
	} {
		if got := trailingComma([]byte(text)); got != want {
			t.Errorf("trailingComma(%q) = %v, want %v", text, got, want)
		}
	}
}

// While the program runs, the events it has recorded so far are counted
// (for the progress line): a program that runs until its time limit is
// seen recording before it ends.
func TestInstrumentedProgress(t *testing.T) {
	t.Parallel()
	in, bin, root := prepareInstrumented(t, "forever", true)
	var mu sync.Mutex
	var counts []int
	opts := Options{Binary: bin, Dir: filepath.Join(root, "testdata/record/forever"), Timeout: 2 * time.Second, MaxEvents: 1 << 22, Output: io.Discard}
	opts.Progress = func(n int) {
		mu.Lock()
		counts = append(counts, n)
		mu.Unlock()
	}
	tr, oc, err := RecordInstrumented(context.Background(), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	if oc.Complete {
		t.Fatalf("the program ended by itself: %+v", oc)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(counts) < 2 {
		t.Fatalf("progress called %d times, want calls while the program ran and one at the end", len(counts))
	}
	last := counts[len(counts)-1]
	if last != len(tr.Events) {
		t.Errorf("the last progress call says %d events, the trace has %d", last, len(tr.Events))
	}
	running := counts[:len(counts)-1]
	if running[len(running)-1] == 0 {
		t.Errorf("no event counted while the program ran: %v", running)
	}
	for i, n := range running {
		if n < 0 || n > 1<<22 || i > 0 && n < running[i-1] {
			t.Errorf("counts while running %v: not growing within the limit of %d", running, 1<<22)
			break
		}
	}
}

// avcheck's own runtime is not rewritten when its tests are recorded
// (its code runs pinned to its P, where a probe may not block): the
// recording says so, and a run in which no probe ran, so that the
// runtime never started, is a trace of no event, not an error.
func TestInstrumentedRuntimeItself(t *testing.T) {
	t.Parallel()
	in, bin, root := prepareInstrumentedPkg(t, "./dynamic/record/avrt", false)
	want := []string{"the files of github.com/avcheck/avcheck/dynamic/record/avrt: it is the recording runtime itself"}
	if !slices.Equal(in.Unrewritten, want) {
		t.Errorf("not rewritten: %q, want %q", in.Unrewritten, want)
	}
	var out strings.Builder
	tr, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: filepath.Join(root, "dynamic/record/avrt"), Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		t.Fatalf("outcome %+v\n%s", oc, out.String())
	}
	if len(tr.Events) != 0 {
		t.Errorf("%d events recorded, want none", len(tr.Events))
	}
}

// A read that no statement can be probed before is recorded where the
// program evaluates it (testdata/record/inplace): the cases of a switch
// each when it is tested, the second only once the first has ruled out a
// nil pointer, *b.q after b.q, p.n in the condition of an if whose
// statement declares p, and ring[pick()] and its n, whose index a call
// gives (in place, pick runs once). The Delve recorder, which records a
// line's reads when the line is reached, cannot evaluate p.n there (p is
// not declared yet) nor the reads through a call, and records *b.q and
// b.q in the order of the plan.
func TestInstrumentedReadsInPlace(t *testing.T) {
	kind := func(k string) []string { // kind(), b.p set to a node of n k
		switch k {
		case "":
			return []string{"acq 22", "rd b.p 25", "rel 23"}
		case "2":
			return []string{"acq 22", "rd b.p 25", "rd b.p 27", "rd b.p.n 27", "rel 23"}
		}
		return []string{"acq 22", "rd b.p 25", "rd b.p 27", "rd b.p.n 27", "rd b.q 29", "rd *b.q 29", "rel 23"}
	}
	set := []string{"acq 45", "wr b.p 46", "wr b.q 47", "rel 48"}
	want := slices.Concat(kind(""), set, kind("2"), []string{"acq 36", "rd b.p 38", "rd b.p.n 38", "rel 37"}, set, kind("1"),
		[]string{"acq 76", "rd ring 77", "rd ring[pick()] 77", "rd ring[pick()].n 77", "rel 78"})
	events := func(tr *trace.Trace) []string {
		var got []string
		for _, e := range tr.Events {
			name := tr.Object(e.Obj).Name
			if e.Kind.IsAccess() && name != "b" || e.Kind == trace.KindAcquire || e.Kind == trace.KindRelease {
				got = append(got, fmt.Sprintf("%s %s %d", e.Kind, name, tr.Site(e.Site).Line))
			}
		}
		// The lock's events name their object b.mu.
		for i, s := range got {
			got[i] = strings.Replace(s, " b.mu", "", 1)
		}
		return got
	}
	t.Run("instrument", func(t *testing.T) {
		in, bin, root := prepareInstrumented(t, "inplace", true)
		if in.Skipped != 2 {
			t.Errorf("%d accesses not probed, want 2 (over's)", in.Skipped)
		}
		tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root})
		if got := events(tr); !slices.Equal(got, want) {
			t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("delve", func(t *testing.T) {
		want := slices.Clone(want)
		want = slices.DeleteFunc(want, func(s string) bool { return s == "rd b.p.n 38" || strings.HasPrefix(s, "rd ring[") })
		i := slices.Index(want, "rd b.q 29")
		want[i], want[i+1] = want[i+1], want[i]
		plan, bin := prepare(t, "inplace", true)
		tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" || oc.Unevaluated != 3 {
			t.Fatalf("outcome %+v, want a normal end and three accesses not evaluated", oc)
		}
		if got := events(tr); !slices.Equal(got, want) {
			t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// A file whose rewriting does not compile is compiled as it is, and said
// to be: the package is recorded without its probes, never refused.
func TestInstrumentedRewritingFails(t *testing.T) {
	testBreakRewriting = func(name string, out []byte) []byte {
		if filepath.Base(name) == "forcond.go" {
			return append(out, "\nvar _ = notDeclared\n"...)
		}
		return out
	}
	defer func() { testBreakRewriting = nil }()
	in, bin, root := prepareInstrumented(t, "forcond", false)
	file := filepath.Join(root, "testdata/record/forcond/forcond.go")
	if len(in.Unrewritten) != 1 || !strings.HasPrefix(in.Unrewritten[0], file+": compiled as it is: its rewriting did not compile") || !strings.Contains(in.Unrewritten[0], "undefined: notDeclared") {
		t.Errorf("files not rewritten: %q, want %s with the compiler's error", in.Unrewritten, file)
	}
	if want := []string{filepath.Join(root, "testdata/record/forcond/forcond_test.go")}; !slices.Equal(in.Files, want) {
		t.Errorf("files rewritten: %q, want %q", in.Files, want)
	}
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record/forcond")})
	var accesses []string
	for _, e := range tr.Events {
		if e.Kind.IsAccess() {
			accesses = append(accesses, fmt.Sprintf("%s %s", e.Kind, tr.Object(e.Obj).Name))
		}
	}
	// Those of the test's file only: none of the loop's, in forcond.go.
	if want := []string{"rd l", "rd chan@forcond_test.go:10"}; !slices.Equal(accesses, want) {
		t.Errorf("accesses %q, want %q", accesses, want)
	}
}

// A recording stopped at its limit says which of the package's top-level
// tests it reached: the long test it stopped in, not the test after it,
// nor the parallel test that waits in t.Parallel for the others to end.
// One that runs to its end says nothing of them.
func TestInstrumentedReached(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "cutsuite", false)
	dir := filepath.Join(root, "testdata/record/cutsuite")
	_, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: dir, MaxEvents: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if !oc.CutAtLimit || !slices.Equal(oc.Tests, []string{"TestLong", "TestLongToo", "TestLost", "TestWaits"}) || !slices.Equal(oc.Reached, []string{"TestLong"}) {
		t.Errorf("cut %v, tests %q, reached %q; want a cut, tests TestLong, TestLongToo, TestLost and TestWaits, reached TestLong", oc.CutAtLimit, oc.Tests, oc.Reached)
	}
	_, oc, err = RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if oc.CutAtLimit || oc.Tests != nil || oc.Reached != nil {
		t.Errorf("a whole run: cut %v, tests %q, reached %q; want none", oc.CutAtLimit, oc.Tests, oc.Reached)
	}
}

// A lock taken through a sync.Locker (a sync.Cond's L, a Locker variable)
// is recorded as the *sync.Mutex's it is (avrt.LockerLock): hits, updated
// in one critical section, has no finding, and total's update split in
// two is a lost update. Unrecorded, both counters raced.
func TestInstrumentedLocker(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "lockerlock", true)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: root})
	got := findings(tr)
	want := []string{"filtered R-W-W c.total main.go:25:rd main.go:28:wr main.go:28:wr"}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
