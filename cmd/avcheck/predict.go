package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// Exit codes of every mode of avcheck (avcheck help lists them).
const (
	exitClean    = 0 // nothing reported
	exitError    = 1 // a package that does not build, a trace that cannot be read
	exitUsage    = 2 // bad flags or arguments
	exitFindings = 3 // findings reported
)

const predictUsage = "usage: avcheck predict [-format=auto|native|text|std] [-mode=predict|observed] [-engine=search|all] [-precise=true|false] [-solver=gini|z3|cvc5] [-window N] [-budget D] [-json|-sarif] [-all] FILE (avcheck predict -h for help)"

const predictHelp = `usage: avcheck predict [flags] FILE

Predict atomicity violations from a saved trace: not only those the recorded
run exhibits, but those another interleaving of the same events would.

Each finding is printed as file:line:col: message, with the other accesses
indented below and a witness: a schedule of the trace's events that realises
it, checked before it is reported. See docs/predict.md for what each kind of
finding means, the JSON schema, and the trace formats.

Examples:
  avcheck predict trace.avt               predict, text output
  avcheck predict -json trace.avt         the same as JSON (schema version 1)
  avcheck predict -sarif trace.avt        as SARIF 2.1.0, for GitHub code scanning
  avcheck predict -mode=observed run.txt  only check the recorded run itself
  avcheck predict -engine=all trace.avt   also run the meta-analysis (slower)
  avcheck predict -all trace.txt          also show what the filters removed
  avcheck predict -solver=z3 trace.avt    prove findings with an installed z3

Each finding has a level: predicted (an engine predicts it), filtered (it
survives AVFilter), proven (a solver found an interleaving of the recorded
run, with the values it read, that exhibits it; the witness is that
interleaving). The precise stage (-precise, on by default) drops findings
no interleaving can exhibit; -all shows them as infeasible.

A trace is what "avcheck run" records, or any file in one of the formats of
docs/trace-formats.md. The text format is one event per line:

  avtrace 1
  g1 fork g2
  g1 acq mu
  g1 rd c.n @counter.go:12:2 region=1.1   # region 1, instance 1
  g1 rel mu
  g2 wr c.n @counter.go:20:2

Exit status: 0 nothing reported, 3 findings reported, 1 the trace could not
be read, 2 bad usage.

Flags:
`

// runPredict is "avcheck predict". An interrupt (Ctrl-C, SIGTERM) while
// the trace is read ends the command; while it is predicted on, it stops
// the prediction, which reports what it decided by then.
func runPredict(args []string) int {
	return predictContext(context.Background(), true, args, os.Stdout, os.Stderr)
}

// predictMain is avcheck predict without its handling of interrupts.
func predictMain(args []string, stdout, stderr io.Writer) int {
	return predictContext(context.Background(), false, args, stdout, stderr)
}

// predictContext is avcheck predict: ending ctx stops the prediction, and
// so does an interrupt if trap is set.
func predictContext(ctx context.Context, trap bool, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("avcheck predict", flag.ContinueOnError)
	// The flag package's own messages are replaced by one error line and
	// the usage line; -h prints the full help on stdout.
	fs.SetOutput(io.Discard)
	format := fs.String("format", "auto", "trace `format`: auto (detect), native, text or std")
	mode := fs.String("mode", "predict", "`mode`: predict (other interleavings too) or observed (the recorded run only)")
	asJSON := fs.Bool("json", false, "write the report as JSON (schema version 1, see docs/predict.md)")
	asSARIF := fs.Bool("sarif", false, "write the report as SARIF 2.1.0, with paths relative to the top of the Git checkout (see docs/predict.md)")
	all := fs.Bool("all", false, "also show findings removed by AVFilter or without a witness, marked as dropped")
	var precise preciseFlags
	precise.register(fs)
	engine := fs.String("engine", "search", "prediction `engines`: search (the pattern search) or all (also the meta-analysis, which is exact for two goroutines and one variable, where the search agrees with it, and is the slowest stage on long traces)")
	// Flags may come before or after the file, as with avcheck run; "--"
	// ends them, for a file whose name starts with "-".
	files, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, predictHelp)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitClean
		}
		fmt.Fprintf(stderr, "avcheck predict: %v\n", err)
		fmt.Fprintln(stderr, predictUsage)
		return exitUsage
	}
	if len(files) != 1 {
		if len(files) == 0 {
			fmt.Fprintln(stderr, "avcheck predict: no trace file given")
		} else {
			fmt.Fprintf(stderr, "avcheck predict: one trace file at a time, not %d (%s)\n", len(files), strings.Join(files, " "))
		}
		fmt.Fprintln(stderr, predictUsage)
		return exitUsage
	}
	if *asJSON && *asSARIF {
		fmt.Fprintln(stderr, "avcheck predict: -json and -sarif cannot be used together")
		fmt.Fprintln(stderr, predictUsage)
		return exitUsage
	}
	f, err := trace.ParseFormat(*format)
	if err != nil {
		fmt.Fprintf(stderr, "avcheck predict: %v\n", err)
		return exitUsage
	}
	if *mode != "predict" && *mode != "observed" {
		fmt.Fprintf(stderr, "avcheck predict: unknown mode %q (want predict or observed)\n", *mode)
		return exitUsage
	}
	if *engine != "search" && *engine != "all" {
		fmt.Fprintf(stderr, "avcheck predict: unknown engine %q (want search or all)\n", *engine)
		return exitUsage
	}
	if code, err := precise.check(); err != nil {
		fmt.Fprintf(stderr, "avcheck predict: %v\n", err)
		if code == exitUsage {
			fmt.Fprintln(stderr, predictUsage)
		}
		return code
	}
	path := files[0]

	start := time.Now()
	var (
		t        *trace.Trace
		findings []predict.Finding
		st       report.Stats
		res      *predict.Result
	)
	// On a terminal, a line on stderr shows what is being done.
	p := newProgress(stderr, "avcheck predict")
	defer p.Close()
	stderr = p.output(stderr)
	switch *mode {
	case "predict":
		// The search's index is built while the file is read.
		var pre *predict.Prepass
		// Nearly everything reading allocates stays live (the events, the
		// index), so a collection while the trace is read frees little
		// (about 9 bytes per event on the 10M-event trace) and costs
		// much: it marks the growing heap again at every doubling, while
		// the three goroutines that read already keep two cores busy.
		// The collector is off until the trace is read (about 0.8 CPU
		// seconds and 0.4 s of wall time less on that trace, 5% more
		// peak RSS). Only for a regular file, though: its size tells
		// how large to make the event array, while a pipe's events
		// grow it by doubling, and with the collector off every
		// outgrown array would stay until the end of reading (5.1 GB
		// peak instead of 3.4 GB for that trace through a pipe).
		restoreGC := func() {}
		off := false
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			restoreGC, off = collectorOff(), true
		}
		var read atomic.Int64
		p.Stage("reading the trace", func() string { return fmt.Sprintf("%d events", read.Load()) }, "")
		t, pre, err = readTrace(path, f, func(n int) { read.Add(int64(n)) }, off)
		restoreGC()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitError
		}
		// The meta-analysis (seed 004) is exact for two goroutines and one
		// variable, where the pattern search agrees with brute force too
		// (pattern_diff_test.go); on a long trace it takes most of the
		// time, so it runs only on request.
		opts := predict.Options{All: *all, Meta: *engine == "all"}
		precise.apply(&opts)
		if trap {
			var stop context.CancelFunc
			ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
		}
		opts.Context = ctx
		var decided, candidates atomic.Int64
		p.Stage(fmt.Sprintf("predicting on %d events", len(t.Events)), func() string {
			if n := candidates.Load(); n > 0 {
				return fmt.Sprintf("%d of %s decided", decided.Load(), plural(int(n), "possible violation"))
			}
			return "searching"
		}, "Ctrl-C: stop")
		if p != nil {
			opts.Progress = func(d, n int) {
				decided.Store(int64(d))
				candidates.Store(int64(n))
			}
		}
		if clockBound(stderr, "avcheck predict", t) {
			// The index is built again, for the events kept; the
			// Prepass's goroutine ends, and what it holds is freed.
			pre.Close()
			pre = nil
		}
		defer limitHeapGrowth()()
		res = predict.PredictIndexed(t, pre, opts)
		p.Close()
		warnPrecise(stderr, "avcheck predict", res)
		findings = res.Findings
		st = report.Stats{Events: len(t.Events), Goroutines: res.Goroutines, Variables: res.Variables}
	case "observed":
		if t, findings, st, err = observeFile(path, f); err != nil {
			fmt.Fprintln(stderr, err)
			return exitError
		}
	}
	st.Seconds = time.Since(start).Seconds()
	if st.Events == 0 {
		fmt.Fprintf(stderr, "avcheck predict: %s: the trace has no events\n", path)
	}

	// A report of many findings is written for a while: the next
	// interrupt stops it where it is.
	wctx := context.Background()
	if trap {
		var stop context.CancelFunc
		wctx, stop = signal.NotifyContext(wctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	out := interruptible{wctx, stdout}
	switch {
	case *asJSON:
		err = report.JSON(out, t, findings, st)
	case *asSARIF:
		err = report.SARIF(out, t, findings, sarifOptions(workDir()))
	default:
		err = report.Text(out, t, findings, report.TextOptions{Dir: workDir()})
	}
	if errors.Is(err, errInterrupted) {
		fmt.Fprintln(stderr, "avcheck predict: interrupted while writing the report, which is cut short")
		return exitError
	}
	if err != nil {
		fmt.Fprintf(stderr, "avcheck predict: %v\n", err)
		return exitError
	}
	if res != nil && res.Stopped {
		if res.Candidates == 0 {
			fmt.Fprintln(stderr, "avcheck predict: interrupted while searching the trace for violations, before any was decided")
		} else {
			fmt.Fprintf(stderr, "avcheck predict: interrupted while predicting: the findings shown are those of the %d of %d possible violations decided\n", res.Decided, res.Candidates)
		}
		return exitError
	}
	for _, fd := range findings {
		if fd.Dropped == "" {
			return exitFindings
		}
	}
	return exitClean
}

// openTrace opens a trace file; its error is one line naming the file.
func openTrace(path string, f trace.Format) (*trace.File, error) {
	file, err := trace.Open(path, f)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("avcheck predict: %s: %w", path, pe.Err)
		}
		return nil, err
	}
	return file, nil
}

// readError makes an error met while reading path one line naming the
// file: a malformed file's position, or the event that makes the trace
// impossible.
func readError(path string, err error) error {
	var fe *trace.FormatError
	if errors.As(err, &fe) {
		return err // already "file:line: what was expected"
	}
	var ve *trace.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("%s: %w", path, err)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("avcheck predict: %s: %w", path, err)
}

// readTrace reads a whole trace file and checks that it is a possible
// execution, building the prediction's index as it goes; every error is
// one line naming the file.
//
// read, if not nil, is told how many events each run stored has.
//
// With collectGrown set (the collector being off), each time the trace's
// event array is replaced by a larger one a collection frees the one it
// replaces, and what the index outgrew with it: until the file's size
// has told how large to make the array (trace.ReadAllFunc), the array
// grows by append, and the arrays it leaves behind, about four times the
// events of the sample, stayed until the end of reading. The heap is
// small then, and a collection cheap.
func readTrace(path string, f trace.Format, read func(int), collectGrown bool) (*trace.Trace, *predict.Prepass, error) {
	file, err := openTrace(path, f)
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	// Parsing and validation run on a goroutine of their own while this
	// one stores the events and indexes them.
	r := trace.ReadAhead(file, trace.NewValidator(file))
	defer r.Close()
	pre := predict.NewPrepass(r.Object)
	pre.SetClockBound(clockWords)
	// stored is the events stored before a run: the run's capacity
	// reaches to the end of the trace's array.
	stored, arrayCap := 0, 0
	each := func(evs []trace.Event) {
		pre.Add(evs)
		if read != nil {
			read(len(evs))
		}
		if c := stored + cap(evs); c != arrayCap {
			if collectGrown && arrayCap != 0 {
				runtime.GC()
			}
			arrayCap = c
		}
		stored += len(evs)
	}
	t, err := trace.ReadAllFunc(r, each)
	if err != nil {
		pre.Close()
		return nil, nil, readError(path, err)
	}
	return t, pre, nil
}

func workDir() string {
	d, err := os.Getwd()
	if err != nil {
		return ""
	}
	return d
}

// limitHeapGrowth bounds how far the heap may grow beyond what it holds
// once the trace is read, with a soft memory limit, and returns a function
// that restores the previous limit.
//
// Reading a long trace leaves most of the heap live (the events, the
// search's index), and what the stages after it allocate is short-lived.
// With the default GOGC the heap may grow to twice its live size before
// the next collection, and every page of that growth is a fresh page the
// kernel must fault in: on the 10M-event trace about 1 GB of them, some
// half a second of system time per GB on the machine avcheck is built on
// (more when a page's first touch is a read, which costs a TLB shootdown
// on every core). With the limit a quarter above the memory in use (at
// least 256 MB above), the collector runs sooner and the stages reuse
// each other's garbage: on that trace the peak RSS goes from 2.25 to
// 1.75 GB and the system time from 2.0 to 1.3 s. On a short trace the
// limit is above the default goal and changes nothing. A lower
// GOMEMLIMIT set by the user stays.
//
// The limit follows the live heap up: a stage whose live heap outgrows
// it (the meta-analysis of -engine=all on a trace of thousands of
// goroutines holds 2 GB against a trace read in 300 MB) would otherwise
// have the collector run without pause at the limit, which doubled the
// CPU time of that trace (followLiveHeap).
func limitHeapGrowth() (restore func()) {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return func() {}
	}
	inUse := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	limit := headroom(inUse)
	gcSettings.Lock()
	defer gcSettings.Unlock()
	if gcSettings.limiting == 0 {
		gcSettings.limit = debug.SetMemoryLimit(-1)
		if limit >= gcSettings.limit {
			return func() {}
		}
	} else {
		// A concurrent call (tests) may have set a higher limit already,
		// but none above the limit before the first call.
		limit = min(max(limit, debug.SetMemoryLimit(-1)), gcSettings.limit)
	}
	gcSettings.limiting++
	debug.SetMemoryLimit(limit)
	if !gcSettings.following {
		gcSettings.following = true
		armLiveHeapHook()
	}
	return func() {
		gcSettings.Lock()
		defer gcSettings.Unlock()
		if gcSettings.limiting--; gcSettings.limiting == 0 {
			debug.SetMemoryLimit(gcSettings.limit)
		}
	}
}

// headroom is how far above the memory in use limitHeapGrowth sets the
// soft memory limit.
func headroom(inUse int64) int64 { return inUse + max(inUse/4, 256<<20) }

// armLiveHeapHook has followLiveHeap called after the next collection.
func armLiveHeapHook() {
	// A sentinel with a pointer, so that it is not one of the tiny
	// allocations a cleanup may wait for with others.
	sentinel := &struct {
		p *int
		_ [16]byte
	}{}
	runtime.AddCleanup(sentinel, func(struct{}) { followLiveHeap() }, struct{}{})
}

// followLiveHeap raises the soft memory limit that limitHeapGrowth set to
// a quarter above the live heap when a collection finds the live heap
// has grown that close to it (never above the limit before the first
// call), and waits for the next collection while any call still limits.
func followLiveHeap() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	gcSettings.Lock()
	defer gcSettings.Unlock()
	if gcSettings.limiting == 0 {
		gcSettings.following = false
		return
	}
	if s[0].Value.Kind() == metrics.KindUint64 {
		live := int64(s[0].Value.Uint64())
		if want := min(headroom(live), gcSettings.limit); want > debug.SetMemoryLimit(-1) {
			debug.SetMemoryLimit(want)
		}
	}
	armLiveHeapHook()
}

// collectorOff turns the garbage collector off until the function it
// returns is called.
func collectorOff() (restore func()) {
	gcSettings.Lock()
	defer gcSettings.Unlock()
	if gcSettings.off == 0 {
		gcSettings.percent = debug.SetGCPercent(-1)
	}
	gcSettings.off++
	return func() {
		gcSettings.Lock()
		defer gcSettings.Unlock()
		if gcSettings.off--; gcSettings.off == 0 {
			debug.SetGCPercent(gcSettings.percent)
		}
	}
}

// gcSettings is what collectorOff and limitHeapGrowth changed of the
// process's collector settings, which calls from concurrent tests share:
// the first call saves the settings, the last one out restores them.
var gcSettings struct {
	sync.Mutex
	off       int   // calls with the collector off
	percent   int   // GOGC before the first of them
	limiting  int   // calls with a memory limit
	limit     int64 // the limit before the first of them
	following bool  // followLiveHeap will run after the next collection
}

// errInterrupted is interruptible's error once its context is done.
var errInterrupted = errors.New("interrupted")

// interruptible is a writer that fails once its context is done.
type interruptible struct {
	ctx context.Context
	w   io.Writer
}

func (w interruptible) Write(p []byte) (int, error) {
	if w.ctx.Err() != nil {
		return 0, errInterrupted
	}
	return w.w.Write(p)
}

// clockWords is the bound of the goroutines' clocks that clockBound
// keeps a prediction within; tests lower it.
var clockWords int64 = predict.DefaultClockWords

// clockBound cuts t where its live goroutines' clocks would pass
// clockWords (predict.ClockBound), says so on errw, and reports whether
// it cut.
func clockBound(errw io.Writer, cmd string, t *trace.Trace) bool {
	n, why := predict.ClockBound(t, clockWords)
	if why == "" {
		return false
	}
	fmt.Fprintf(errw, "%s: the prediction covers the trace's first %d events of %d: past them, %s\n", cmd, n, len(t.Events), why)
	t.Events = t.Events[:n]
	return true
}
