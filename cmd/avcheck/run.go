package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/avcheck/avcheck/analyzers/avreport"
	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/record"
	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
)

const runUsage = "usage: avcheck run [-run regexp] [-timeout d] [-max-events n] [-o FILE] [-json|-sarif] [-all] [-v] [-maxd n] [-precise=true|false] [-solver=gini|z3|cvc5] [-window N] [-budget D] [-replay=true|false] [-replay-timeout d] [package] [-- args] (avcheck run -h for help)"

const runHelp = `usage: avcheck run [flags] [package] [-- program args]

Record one run of a package's tests (or of a main package without tests),
then predict the atomicity violations that run and the other
interleavings of its events admit, and report them like 'avcheck
predict'. The package defaults to the one in the current directory.

  1. plan: the regions analyzer finds the shared accesses, go statements
     and intended atomic regions of the package and of the packages of
     its module that it imports;
  2. build: the packages under test are compiled from rewritten copies
     (go build -overlay; your files are not written) whose probes call a
     small recording runtime, optimised (the runtime and the copies of
     other modules it rewrites are kept in a cache, $AVCHECK_CACHE or
     avcheck/instrument under the user's cache directory, so that the go
     build cache serves later builds);
  3. record: the binary runs at nearly its own speed, its probes writing
     their events to a file (docs/run.md).
     With -recorder=delve, or for a package outside the main module (or
     a vendored main module), step 2 is 'go test -c' (or 'go build') with
     -gcflags=all=-N -l and step 3 runs the binary under Delve with a
     breakpoint at every probe, about a thousand times slower: locks,
     WaitGroups, Cond and Once are recorded at the sync package, channel
     operations inside the runtime, atomics at their lines;
  4. predict, prove each finding with a solver over the values the run
     read (-precise, on by default: level proven, or dropped as
     infeasible; see avcheck predict -h);
  5. replay (-replay, on by default): the witness of each proven finding
     is forced on the program run again under Delve (a binary built for
     it, or with -recorder=delve the binary of step 2), up to
     GOMAXPROCS replays at a time, each for at most
     -replay-timeout; a finding whose replay shows the violation (a lost
     update in the values read and written, or the test failing) is
     raised to level replayed with what was seen, and one whose replay
     does not keeps its level with the reason. Then the report; it is
     also written, as JSON, to .avcheck/report.json at the module root.

Examples:
  avcheck run ./testdata/example/bank -run TestTransfer
  avcheck run -json -o run.avt ./pkg      keep the trace, JSON report
  avcheck run -sarif ./pkg > av.sarif     SARIF 2.1.0, for GitHub code scanning
  avcheck run ./cmd/server -- -port 0     a main package with arguments
  avcheck run -recorder=delve ./pkg       record under the debugger, no rewriting

Under Delve the run is slow (every probe stops the program); choose one
test with -run. If the program panics, exits, deadlocks, runs past
-timeout or is interrupted, it is killed and the events recorded so far are predicted on.
Ctrl-C stops any stage within a second: while loading or building, it
ends the run; while recording, the prediction follows, and a second
Ctrl-C stops it, showing the findings decided so far (exit status 1).
SIGTERM (a CI job's time limit) ends the whole run at once: the program
is killed and nothing more is predicted.
Recording under Delve, and the replay, need ptrace (see docs/run.md),
which also lists what is not recorded.

Exit status: 0 nothing reported, 3 findings reported, 1 the package could
not be built or recorded, 2 bad usage.

Flags:
`

// runRecord is "avcheck run". An interrupt (Ctrl-C) stops the stage under
// way, SIGTERM the whole run: see interrupts.
func runRecord(args []string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return runStages(watchSignals(sigs), args, os.Stdout, os.Stderr, nil, nil)
}

// runMain is avcheck run with ctx for every stage, for tests: cancelling
// it stops the stage under way and every later one.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runStages(&interrupts{parent: ctx}, args, stdout, stderr, nil, nil)
}

// interrupts turns signals into the end of avcheck run's stages. Each
// stage (plan and build, record, write the trace, predict, replay) runs
// with a context of its own. An interrupt (Ctrl-C) ends every stage under
// way when it comes: an interrupted recording is still predicted on, as a
// program that ends badly is, and a second interrupt stops the
// prediction. SIGTERM, which CI systems and supervisors send to end a job,
// ends every stage under way and every later one: the run stops at once
// with what was decided so far.
type interrupts struct {
	parent context.Context

	mu       sync.Mutex
	next     chan struct{} // closed by the next signal; nil in tests
	signaled bool          // a signal has come
}

// watchSignals returns the interrupts of a run whose signals come on sigs.
func watchSignals(sigs <-chan os.Signal) *interrupts {
	parent, terminate := context.WithCancel(context.Background())
	in := &interrupts{parent: parent, next: make(chan struct{})}
	go func() {
		for s := range sigs {
			in.mu.Lock()
			close(in.next)
			in.next = make(chan struct{})
			in.signaled = true
			in.mu.Unlock()
			if s == syscall.SIGTERM {
				terminate()
			}
		}
	}()
	return in
}

// stage returns the context of a stage, and the function that ends it.
func (in *interrupts) stage() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(in.parent)
	in.mu.Lock()
	next := in.next
	in.mu.Unlock()
	if next != nil {
		go func() {
			select {
			case <-next:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// stopped reports whether a signal has come or the run was cancelled: work
// not yet started (avcheck test's next packages) does not start.
func (in *interrupts) stopped() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.signaled || in.parent.Err() != nil
}

// runConfig holds avcheck run's flags.
type runConfig struct {
	run     string
	timeout time.Duration
	out     string
	report  string
	format  trace.Format
	asJSON  bool
	asSARIF bool
	all     bool
	verbose bool
	maxd    int
	precise preciseFlags
	pkg     string
	args    []string
	// recorder is "delve" or "instrument" (see record.Instrument);
	// recorderSet says -recorder was given, so that a package the
	// instrumenting recorder cannot rewrite is an error rather than
	// recorded under Delve.
	recorder    string
	recorderSet bool
	// maxEvents bounds the instrumenting recorder's trace
	// (record.Options.MaxEvents).
	maxEvents int64
	// replay says to replay each proven finding's witness (replay.go),
	// each for at most replayTimeout.
	replay        bool
	replayTimeout time.Duration
	// tags are the build tags, comma-separated (go test -tags).
	tags string
}

func parseRunArgs(args []string, stdout, stderr io.Writer) (*runConfig, int, bool) {
	cfg := &runConfig{pkg: "."}
	fs := flag.NewFlagSet("avcheck run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.run, "run", "", "run only the tests matching `regexp` (as go test -run)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "kill the program after `d` and predict on what was recorded")
	fs.Int64Var(&cfg.maxEvents, "max-events", record.DefaultMaxEvents, "stop recording after `n` probe events (not under Delve; the trace may keep fewer or more events, an atomic operation being one probe and up to four events) (or once the trace would take a quarter of the free disk) and predict on what was recorded")
	fs.StringVar(&cfg.out, "o", "", "keep the recorded trace in `FILE` (see -format and docs/trace-formats.md)")
	fs.StringVar(&cfg.report, "report", "", "write the JSON report that go vet's avreport reads to `FILE` (default .avcheck/report.json at the module root)")
	format := fs.String("format", "native", "`format` of the trace kept with -o: native or text")
	fs.BoolVar(&cfg.asJSON, "json", false, "write the report as JSON (the schema of avcheck predict -json)")
	fs.BoolVar(&cfg.asSARIF, "sarif", false, "write the report as SARIF 2.1.0, with paths relative to the top of the Git checkout (see docs/run.md)")
	fs.BoolVar(&cfg.all, "all", false, "also show findings removed by AVFilter or without a witness, marked as dropped")
	fs.BoolVar(&cfg.verbose, "v", false, "list, by site, the accesses of the packages under test that were reached but not recorded, and those the instrumenting recorder could not probe")
	fs.StringVar(&cfg.recorder, "recorder", "instrument", "how to record: `instrument` (rewritten packages under test; packages outside the main module are recorded under Delve) or delve (the debugger, no rewriting, about a thousand times slower; see docs/run.md)")
	fs.BoolVar(&cfg.replay, "replay", true, "replay the witness of each proven finding under the debugger, and raise it to level replayed when the violation shows (-replay=false: do not)")
	fs.DurationVar(&cfg.replayTimeout, "replay-timeout", defaultReplayTimeout, "stop a replay after `d`; its finding stays proven")
	fs.StringVar(&cfg.tags, "tags", "", "a comma-separated `list` of build tags to consider satisfied, as go test -tags: the package is loaded, built and replayed with them")
	fs.IntVar(&cfg.maxd, "maxd", 5, "how many source lines apart two accesses may be and still form one proximity region")
	cfg.precise.register(fs)
	// The program's own arguments follow "--".
	for i, a := range args {
		if a == "--" {
			cfg.args = args[i+1:]
			args = args[:i]
			break
		}
	}
	// Flags may come before or after the package, as with go test.
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, runHelp)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, exitClean, false
		}
		fmt.Fprintf(stderr, "avcheck run: %v\n", err)
		fmt.Fprintln(stderr, runUsage)
		return nil, exitUsage, false
	}
	if len(pos) > 1 {
		fmt.Fprintf(stderr, "avcheck run: one package at a time, not %d\n", len(pos))
		fmt.Fprintln(stderr, runUsage)
		return nil, exitUsage, false
	}
	if len(pos) == 1 {
		cfg.pkg = pos[0]
	}
	if manyPackages(cfg.pkg) {
		fmt.Fprintf(stderr, "avcheck run: %s can name many packages, and avcheck run records the tests of one: name one package (avcheck run ./pkg -run TestX)\n", cfg.pkg)
		fmt.Fprintln(stderr, runUsage)
		return nil, exitUsage, false
	}
	if cfg.asJSON && cfg.asSARIF {
		fmt.Fprintln(stderr, "avcheck run: -json and -sarif cannot be used together")
		fmt.Fprintln(stderr, runUsage)
		return nil, exitUsage, false
	}
	f, err := trace.ParseFormat(*format)
	if err != nil || (f != trace.FormatNative && f != trace.FormatText) {
		fmt.Fprintf(stderr, "avcheck run: -format %q: want native or text\n", *format)
		return nil, exitUsage, false
	}
	cfg.format = f
	if code, err := cfg.precise.check(); err != nil {
		fmt.Fprintf(stderr, "avcheck run: %v\n", err)
		if code == exitUsage {
			fmt.Fprintln(stderr, runUsage)
		}
		return nil, code, false
	}
	if cfg.recorder != "delve" && cfg.recorder != "instrument" {
		fmt.Fprintf(stderr, "avcheck run: -recorder %q: want instrument or delve\n", cfg.recorder)
		return nil, exitUsage, false
	}
	fs.Visit(func(f *flag.Flag) { cfg.recorderSet = cfg.recorderSet || f.Name == "recorder" })
	if cfg.timeout <= 0 {
		fmt.Fprintln(stderr, "avcheck run: -timeout must be positive")
		return nil, exitUsage, false
	}
	if cfg.maxEvents <= 0 {
		fmt.Fprintln(stderr, "avcheck run: -max-events must be positive")
		return nil, exitUsage, false
	}
	if cfg.replayTimeout <= 0 {
		fmt.Fprintln(stderr, "avcheck run: -replay-timeout must be positive")
		return nil, exitUsage, false
	}
	return cfg, 0, true
}

// testShared is what the packages of one avcheck test share: the bound
// of the replays running at once (by default, each avcheck run's own,
// GOMAXPROCS of them), and the memory the predictions may hold at once
// (none by default).
type testShared struct {
	replaySlots chan struct{}
	memory      *memBudget
}

// runStages is avcheck run; ended, if not nil, is set to how the
// recorded program ended, for avcheck test, and shared, if not nil, is
// what avcheck test's packages share.
func runStages(in *interrupts, args []string, stdout, stderr io.Writer, ended *record.Outcome, shared *testShared) int {
	var replaySlots chan struct{}
	releaseMemory := func() {}
	defer func() { releaseMemory() }()
	if shared != nil {
		replaySlots = shared.replaySlots
	}
	cfg, code, ok := parseRunArgs(args, stdout, stderr)
	if !ok {
		return code
	}
	dir := workDir()
	if local := packageDir(dir, cfg.pkg); local != dir || cfg.pkg == "." {
		if fi, err := os.Stat(local); err != nil {
			fmt.Fprintf(stderr, "avcheck run: %s: no such directory\n", cfg.pkg)
			return exitError
		} else if !fi.IsDir() {
			fmt.Fprintf(stderr, "avcheck run: %s is a file: name the package's directory\n", cfg.pkg)
			return exitError
		}
	}

	// On a terminal, a line shows the stage; the rest of the output is
	// written above it, through errw.
	p := newProgress(stderr, "avcheck run")
	defer p.Close()
	errw := p.output(stderr)

	// Plan and build.
	p.Stage("loading "+cfg.pkg, nil, "")
	ctx, endStage := in.stage()
	plan, err := makePlan(ctx, record.PlanOptions{Dir: dir, Pattern: cfg.pkg, MaxD: cfg.maxd, Tags: cfg.tags})
	if ctx.Err() != nil {
		endStage()
		p.Close()
		fmt.Fprintf(stderr, "avcheck run: interrupted while loading %s; nothing was recorded\n", cfg.pkg)
		return exitError
	}
	p.Stage("building "+cfg.pkg, nil, "")
	if err != nil {
		// A package that does not compile is shown by the compiler's own
		// messages, as go test shows it.
		_, cleanup, berr := record.Build(ctx, dir, cfg.pkg, false, &record.Plan{BuildFlags: record.TagFlags(cfg.tags)})
		cleanup()
		interrupted := ctx.Err() != nil
		endStage()
		p.Close()
		if interrupted {
			fmt.Fprintf(stderr, "avcheck run: interrupted while building %s; nothing was recorded\n", cfg.pkg)
			return exitError
		}
		if printBuildError(stderr, berr, err) && ended != nil {
			ended.NotBuilt = true
		}
		return exitError
	}
	program := plan.Main && !plan.HasTests
	var (
		bin     string
		cleanup func()
		instr   *record.Instrumented
	)
	if cfg.recorder == "instrument" && !cfg.recorderSet {
		if why := record.Instrumentable(plan); why != "" {
			fmt.Fprintf(errw, "avcheck run: recording under Delve (-recorder=delve), much more slowly: %s\n", why)
			cfg.recorder = "delve"
		}
	}
	if cfg.recorder == "instrument" {
		bin, instr, cleanup, err = record.BuildInstrumented(ctx, dir, cfg.pkg, program, plan)
	} else {
		bin, cleanup, err = record.Build(ctx, dir, cfg.pkg, program, plan)
	}
	defer cleanup()
	interrupted := ctx.Err() != nil
	endStage()
	if interrupted || err != nil {
		p.Close()
	}
	if interrupted {
		fmt.Fprintf(stderr, "avcheck run: interrupted while building %s; nothing was recorded\n", cfg.pkg)
		return exitError
	}
	if err != nil {
		if printBuildError(stderr, err, err) && ended != nil {
			ended.NotBuilt = true
		}
		return exitError
	}

	// Record.
	progArgs := cfg.args
	if !program {
		progArgs = append([]string{"-test.run=" + cfg.run, "-test.timeout=0"}, cfg.args...)
		if cfg.run == "" {
			progArgs = progArgs[1:]
		}
	}
	ctx, endStage = in.stage()
	if p != nil {
		// What will run, since it may be many tests, for long.
		fmt.Fprintf(errw, "avcheck run: %s\n", whatRuns(ctx, bin, program, cfg))
	}
	var events atomic.Int64
	opts := record.Options{Binary: bin, Args: progArgs, Dir: packageDir(dir, cfg.pkg), Output: errw, Timeout: cfg.timeout, MaxEvents: cfg.maxEvents}
	opts.Progress = func(n int) { events.Store(int64(n)) }
	if shared != nil && shared.memory != nil {
		// The trace is made, and predicted on, once the memory it is
		// expected to need is free of the other packages' predictions.
		opts.BeforeConvert = func(n int64) {
			releaseMemory, _ = shared.memory.acquire(ctx, n*predictBytesPerEvent)
		}
	}
	p.Stage("recording", func() string { return plural(int(events.Load()), "event") }, "Ctrl-C: stop it and predict")
	start := time.Now()
	var t *trace.Trace
	var oc record.Outcome
	if instr != nil {
		t, oc, err = record.RecordInstrumented(ctx, instr, opts)
	} else {
		t, oc, err = record.Record(ctx, plan, opts)
	}
	if ended != nil {
		*ended = oc
	}
	endStage()
	if err != nil {
		p.Close()
		fmt.Fprintf(stderr, "avcheck run: %v\n", err)
		return exitError
	}
	fmt.Fprintf(errw, "avcheck run: %s; %d events recorded\n", oc.Message, len(t.Events))
	if oc.Cut != "" {
		fmt.Fprintf(errw, "avcheck run: %s\n", oc.Cut)
	}
	if instr != nil {
		for _, u := range instr.Unrewritten {
			fmt.Fprintf(errw, "avcheck run: not instrumented, so not recorded: %s\n", u)
		}
		om := instr.OtherModules
		if om.Failed != "" {
			fmt.Fprintf(errw, "avcheck run: not instrumented, so not recorded: the synchronisation of %s, whose rewritten packages did not compile: %s\n", strings.Join(om.Rewritten, ", "), om.Failed)
		} else if cfg.verbose && len(om.Rewritten) > 0 {
			fmt.Fprintf(errw, "avcheck run: the synchronisation of other modules' packages is recorded: %s\n", strings.Join(om.Rewritten, ", "))
		}
		for _, l := range om.Left {
			fmt.Fprintf(errw, "avcheck run: not instrumented, so not recorded: the synchronisation of %s\n", l)
		}
		if instr.Deferred > 0 {
			fmt.Fprintf(errw, "avcheck run: not instrumented, so not recorded: %s of defer or go statements\n", plural(instr.Deferred, "atomic operation"))
		}
		if instr.Skipped > 0 {
			more := "; -v lists them"
			if cfg.verbose {
				more = ""
			}
			fmt.Fprintf(errw, "avcheck run: not instrumented, so not recorded: %s whose address cannot be evaluated before its statement%s\n", accessCount(instr.Skipped), more)
			if cfg.verbose {
				printNotProbed(errw, instr.NotProbed, dir)
			}
		}
	}
	printUnrecorded(errw, plan, t, oc, cfg.verbose, instr != nil && len(instr.Unrewritten) > 0, dir)
	if oc.Invalid != "" {
		fmt.Fprintf(errw, "avcheck run: the trace stops before an impossible event: %s\n", oc.Invalid)
	}
	if in.parent.Err() != nil {
		// SIGTERM (or, in tests, the run's context): the run ends here.
		p.Close()
		fmt.Fprintf(stderr, "avcheck run: terminated while recording %s; nothing was predicted\n", cfg.pkg)
		return exitError
	}

	// Keep the trace.
	if cfg.out != "" {
		p.Stage("writing "+cfg.out, nil, "")
		ctx, endStage = in.stage()
		err := saveTrace(ctx, cfg.out, cfg.format, t)
		interrupted := ctx.Err() != nil
		endStage()
		if interrupted || err != nil {
			p.Close()
		}
		if interrupted {
			fmt.Fprintf(stderr, "avcheck run: interrupted while writing %s, which was not written; nothing was predicted\n", cfg.out)
			return exitError
		}
		if err != nil {
			fmt.Fprintf(stderr, "avcheck run: writing %s: %v\n", cfg.out, err)
			return exitError
		}
	}

	// Predict, and prove.
	var decided, candidates atomic.Int64
	p.Stage("predicting", func() string {
		if n := candidates.Load(); n > 0 {
			return fmt.Sprintf("%d of %s decided", decided.Load(), plural(int(n), "possible violation"))
		}
		return ""
	}, "Ctrl-C: stop")
	ctx, endStage = in.stage()
	popts := predict.Options{All: cfg.all, Context: ctx}
	if p != nil {
		popts.Progress = func(d, n int) {
			decided.Store(int64(d))
			candidates.Store(int64(n))
		}
	}
	cfg.precise.apply(&popts)
	clockBound(errw, "avcheck run", t)
	res := predict.Predict(t, popts)
	endStage()
	releaseMemory()

	// Replay the witnesses of the proven findings.
	if cfg.replay && !res.Stopped && slices.ContainsFunc(res.Findings, func(f predict.Finding) bool { return replayable(&f) }) {
		ctx, endStage = in.stage()
		rs := replayStage{p: p, errw: errw, dir: dir, pkg: cfg.pkg, program: program, plan: plan, timeout: cfg.replayTimeout, slots: replaySlots}
		rs.opts.args = progArgs
		rs.opts.dir = packageDir(dir, cfg.pkg)
		rs.opts.recordedFailed = !oc.Complete || oc.Status != 0
		if instr == nil {
			rs.opts.binary = bin
		}
		rs.run(ctx, t, res.Findings)
		endStage()
	}
	p.Close()
	warnPrecise(stderr, "avcheck run", res)
	st := report.Stats{Events: len(t.Events), Goroutines: res.Goroutines, Variables: res.Variables, Seconds: time.Since(start).Seconds()}

	// Write the report. An interrupted prediction's findings are only
	// some: they are shown, but the report that go vet reads keeps the
	// last whole run's.
	var reportHash string
	reportPath := cfg.report
	root := avreport.ModuleRoot(dir)
	var merge []string
	if reportPath == "" && root != "" {
		reportPath = filepath.Join(root, avreport.DefaultReport)
		merge = planDirs(plan)
	}
	if reportPath != "" && !res.Stopped {
		if root == "" {
			root = dir
		}
		reportHash, err = saveReport(reportPath, root, t, res.Findings, st, merge)
		if err != nil {
			fmt.Fprintf(stderr, "avcheck run: writing the report: %v\n", err)
		}
	}
	switch {
	case cfg.asJSON:
		err = report.JSON(stdout, t, res.Findings, st)
	case cfg.asSARIF:
		err = report.SARIF(stdout, t, res.Findings, sarifOptions(dir))
	default:
		err = report.Text(stdout, t, res.Findings, report.TextOptions{Dir: dir})
	}
	if err != nil {
		fmt.Fprintf(stderr, "avcheck run: %v\n", err)
		return exitError
	}
	if res.Stopped {
		switch {
		case res.Candidates == 0:
			fmt.Fprintln(stderr, "avcheck run: interrupted while searching the trace for violations, before any was decided; the report was not written")
		case res.Decided == 0:
			fmt.Fprintf(stderr, "avcheck run: interrupted while predicting, before any of the %d possible violations was decided; the report was not written\n", res.Candidates)
		default:
			fmt.Fprintf(stderr, "avcheck run: interrupted while predicting: the findings shown are those of the %d of %d possible violations decided; the report was not written\n", res.Decided, res.Candidates)
		}
		return exitError
	}
	if len(res.Reported()) > 0 {
		if reportHash != "" {
			fmt.Fprintf(stderr, "avcheck run: to see the findings as diagnostics: %s\n", vetCommand(cfg.report, reportHash, cfg.pkg))
		}
		return exitFindings
	}
	return exitClean
}

// whatRuns says what avcheck run records: the program, or the tests that
// -run selects, as the test binary lists them (-test.list).
func whatRuns(ctx context.Context, bin string, program bool, cfg *runConfig) string {
	if program {
		return "recording the program " + cfg.pkg
	}
	re := cfg.run
	if re == "" {
		re = "."
	}
	cmd := exec.CommandContext(ctx, bin, "-test.list", re)
	cmd.Dir = packageDir(workDir(), cfg.pkg)
	out, err := cmd.Output()
	if err != nil {
		return "recording the tests of " + cfg.pkg
	}
	var tests []string
	for name := range strings.FieldsSeq(string(out)) {
		if strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Example") || strings.HasPrefix(name, "Fuzz") {
			tests = append(tests, name)
		}
	}
	switch {
	case len(tests) == 0 && cfg.run != "":
		return fmt.Sprintf("no test of %s matches -run %s: recording the program's start alone", cfg.pkg, shellQuote(cfg.run))
	case len(tests) == 0:
		return fmt.Sprintf("%s has no tests: recording the program's start alone", cfg.pkg)
	}
	list := strings.Join(tests, ", ")
	if len(tests) > 8 {
		list = strings.Join(tests[:8], ", ") + fmt.Sprintf(" and %d more", len(tests)-8)
	}
	if len(tests) == 1 && cfg.run == "" {
		return fmt.Sprintf("recording the only test of %s: %s", cfg.pkg, list)
	}
	if cfg.run == "" {
		return fmt.Sprintf("recording all %d tests of %s, one after another, which can take long (choose one with -run): %s", len(tests), cfg.pkg, list)
	}
	return fmt.Sprintf("recording %s of %s: %s", plural(len(tests), "test"), cfg.pkg, list)
}

// plural is "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// makePlan is record.MakePlan, given up when ctx is done: the go command
// that loads the packages stops with ctx, but the analysis after it does
// not look at ctx, and is left to end with the process.
func makePlan(ctx context.Context, opts record.PlanOptions) (*record.Plan, error) {
	opts.Context = ctx
	// The go command's work directory is removed here, not by MakePlan,
	// which an interrupt does not wait for.
	work, err := os.MkdirTemp("", "avcheck-load-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	opts.WorkDir = work
	type planned struct {
		plan *record.Plan
		err  error
	}
	c := make(chan planned, 1)
	go func() {
		p, err := record.MakePlan(opts)
		c <- planned{p, err}
	}()
	select {
	case r := <-c:
		return r.plan, r.err
	case <-ctx.Done():
		// Give the go command the moment it takes to stop, so that it
		// is not left behind when avcheck exits.
		select {
		case <-c:
		case <-time.After(500 * time.Millisecond):
		}
		return nil, ctx.Err()
	}
}

// printBuildError prints the compiler's messages when berr, the error of
// building the package, holds them, as go test shows them, and reports
// whether it did (the package does not build); otherwise it prints err.
func printBuildError(stderr io.Writer, berr, err error) (notBuilt bool) {
	var be *record.BuildError
	if errors.As(berr, &be) {
		msg := be.Error()
		if !compilerMessage.MatchString(msg) {
			// The go command's own complaint, such as a package no
			// module provides.
			msg = "avcheck run: " + msg
		}
		fmt.Fprintln(stderr, msg)
		return true
	}
	fmt.Fprintf(stderr, "avcheck run: %v\n", err)
	return false
}

// compilerMessage matches a message that starts with a source position,
// as the compiler's do.
var compilerMessage = regexp.MustCompile(`^\S+\.(go|s|c):\d+`)

// manyPackages reports whether a package pattern can match more than one
// package: a "..." wildcard, or one of the go command's pattern words.
func manyPackages(pattern string) bool {
	switch pattern {
	case "all", "std", "cmd", "tool", "work":
		return true
	}
	return strings.Contains(pattern, "...")
}

// packageDir is where the program runs: the package's directory for a
// relative pattern, as go test does, otherwise the current one.
// planDirs returns the directories of the packages a plan probes.
func planDirs(plan *record.Plan) []string {
	dirs := []string{}
	for f := range plan.Files {
		if d := filepath.Dir(f); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	return dirs
}

func packageDir(dir, pkg string) string {
	if filepath.IsAbs(pkg) {
		return pkg
	}
	if len(pkg) > 0 && pkg[0] == '.' {
		return filepath.Join(dir, pkg)
	}
	return dir
}

// saveTrace writes t to path, through a temporary file that appears
// under path only when it is whole; when ctx is done first, it removes
// the temporary file and returns ctx's error.
func saveTrace(ctx context.Context, path string, f trace.Format, t *trace.Trace) error {
	w, err := trace.Create(path, f)
	if err != nil {
		return err
	}
	if err := trace.WriteTrace(stoppableWriter{w, ctx}, t); err != nil {
		w.Abort()
		return err
	}
	if err := ctx.Err(); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// stoppableWriter is a trace writer that fails once its context is done,
// looked at every 4096 events.
type stoppableWriter struct {
	trace.Writer
	ctx context.Context
}

func (w stoppableWriter) Write(e trace.Event) error {
	if e.Seq%4096 == 0 {
		if err := w.ctx.Err(); err != nil {
			return err
		}
	}
	return w.Writer.Write(e)
}

// saveReport writes the JSON report, with the hashes of the source files
// it names (relative names are taken from root), through a temporary
// file, so that a reader never sees half of it; with merge, the
// directories of the packages recorded, it keeps what the report held
// of other packages (mergeReport). It returns the report's hash, for
// avreport's -avreport.hash.
func saveReport(path, root string, t *trace.Trace, fs []predict.Finding, st report.Stats, merge []string) (string, error) {
	doc := report.NewDocument(t, fs, st)
	doc.HashFiles(root)
	if merge != nil {
		doc = mergeReport(path, root, doc, merge)
	}
	return writeReport(path, doc)
}

// writeReport writes doc to path, whole or not at all (a temporary file
// renamed), and returns the hash of what it wrote.
func writeReport(path string, doc *report.Document) (string, error) {
	var buf bytes.Buffer
	if err := doc.Encode(&buf); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report.json.tmp*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return report.Hash(buf.Bytes()), nil
}
