package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/avcheck/avcheck/analyzers/avreport"
	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/record"
	"github.com/avcheck/avcheck/dynamic/report"
)

const testHelp = `usage: avcheck test [flags] [packages]

Record the tests of every package matched, as 'go test -race' runs them,
with the instrumenting recorder (avcheck run's default), and
predict and report each package's atomicity violations as 'avcheck run'
does. The packages default to the one in the current directory; ./...
names every package below it. Each package's output (the tests' own
PASS and FAIL lines, then its findings) is printed when it is done, in
the order of the packages, with a line per package and a summary at the
end. Packages are recorded in parallel, up to -p at a time.

The findings of all the packages are saved in one JSON report, by
default .avcheck/report.json at the module root, which go vet's avreport
shows as diagnostics (the last line names the command); it is written
only when every package was recorded, so that a run cut short does not
replace a whole one.

A package whose recording stops at -max-events before its tests end
(a long serial test, say, before the concurrent ones) is recorded again
for the top-level tests the recording did not reach (a test waiting in
t.Parallel at the cut counts as not reached), within a second
-max-events that the recordings after the first share, each taking half
of what is left: up to 8 recordings, while each reaches a test and the
second -max-events lasts; the findings of all count once. The tests
that no recording reached are named, and counted after the summary.

The precise stage's flags (-precise, -solver, -window, -budget) are
avcheck run's, and apply to each package. The witness of each proven
finding is then replayed under the debugger, as avcheck run does
(-replay, -replay-timeout), up to GOMAXPROCS replays at a time across
all the packages.

Ctrl-C ends the recording of the packages under way, which are then
predicted on as avcheck run does, and no other package begins; a second
Ctrl-C stops the predictions. SIGTERM (a CI job's time limit) ends every
stage of every package at once, and no other package begins.

A package whose tests failed (its test binary ended with a status other
than 0, or ran past -timeout) has a FAIL line, with its findings counted:
a run that failed is recorded all the same, and predicted on.

Exit status: 0 nothing reported, 3 findings reported, 1 a package could
not be built or recorded or its tests failed, 2 bad usage.

The go test flags -short, -v, -count, -failfast, -parallel, -skip and
-cpu are passed to the test binaries, and -args passes what follows it
as it is; -tags gives the build tags to every go command avcheck runs,
as go test's does.

Examples:
  avcheck test ./...
  avcheck test -run TestTransfer ./bank
  avcheck test -short -v ./...
`

const testUsage = "usage: avcheck test [flags] [packages] (avcheck test -h for help)"

func runTest(args []string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	return testStages(watchSignals(sigs), args, os.Stdout, os.Stderr)
}

// testMain is avcheck test with ctx, for tests.
func testMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return testStages(&interrupts{parent: ctx}, args, stdout, stderr)
}

// testConfig holds avcheck test's flags.
type testConfig struct {
	run      string
	skip     string
	timeout  time.Duration
	p        int
	all      bool
	recorder string
	// recorderSet says -recorder was given; without it, avcheck run
	// records a package outside the main module under Delve.
	recorderSet bool
	report      string
	patterns    []string
	// maxEvents bounds each package's trace (avcheck run -max-events).
	maxEvents int64
	// replay and replayTimeout are avcheck run's -replay and
	// -replay-timeout.
	replay        bool
	replayTimeout time.Duration
	// testArgs are the test binaries' flags that go test flags give
	// (-short becomes -test.short), then -args' arguments.
	testArgs []string
	// precise holds the precise stage's flags; preciseArgs are those
	// given, as avcheck run takes them.
	precise     preciseFlags
	preciseArgs []string
	// tags are the build tags, comma-separated (go test -tags).
	tags string
}

func parseTestArgs(args []string, stdout, stderr io.Writer) (*testConfig, int, bool) {
	cfg := &testConfig{}
	fs := flag.NewFlagSet("avcheck test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.run, "run", "", "run only the tests matching `regexp` (as go test -run)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Minute, "kill a package's test binary after `d` and predict on what was recorded")
	fs.IntVar(&cfg.p, "p", runtime.GOMAXPROCS(0), "record up to `n` packages at a time")
	fs.Int64Var(&cfg.maxEvents, "max-events", record.DefaultMaxEvents, "stop recording a package's tests after `n` probe events (the trace may keep fewer or more events, an atomic operation being one probe and up to four events) (or once the trace would take a quarter of the free disk) and predict on what was recorded")
	fs.BoolVar(&cfg.all, "all", false, "also show findings removed by AVFilter or without a witness, marked as dropped")
	fs.StringVar(&cfg.recorder, "recorder", "instrument", "how to record: `instrument` or delve (see avcheck run -h)")
	fs.BoolVar(&cfg.replay, "replay", true, "replay the witness of each proven finding under the debugger, and raise it to level replayed when the violation shows (-replay=false: do not)")
	fs.DurationVar(&cfg.replayTimeout, "replay-timeout", defaultReplayTimeout, "stop a replay after `d`; its finding stays proven")
	fs.StringVar(&cfg.report, "report", "", "write the JSON report of all the packages, which go vet's avreport reads, to `FILE` (default .avcheck/report.json at the module root)")
	fs.StringVar(&cfg.tags, "tags", "", "a comma-separated `list` of build tags to consider satisfied (as go test -tags)")
	cfg.precise.register(fs)
	short := fs.Bool("short", false, "tell long-running tests to shorten their run time (as go test -short)")
	verbose := fs.Bool("v", false, "log all tests as they are run (as go test -v)")
	count := fs.Int("count", 1, "run each test `n` times (as go test -count)")
	failfast := fs.Bool("failfast", false, "do not start new tests after the first failure (as go test -failfast)")
	parallel := fs.Int("parallel", 0, "run up to `n` parallel tests at once (as go test -parallel; default GOMAXPROCS)")
	fs.StringVar(&cfg.skip, "skip", "", "skip the tests matching `regexp` (as go test -skip)")
	skip := &cfg.skip
	cpu := fs.String("cpu", "", "run the tests with each GOMAXPROCS in the comma-separated `list` (as go test -cpu)")
	// -args passes the rest of the command line to the test binaries.
	var rest []string
	if i := slices.Index(args, "-args"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, testHelp)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, exitClean, false
		}
		fmt.Fprintf(stderr, "avcheck test: %v\n", err)
		fmt.Fprintln(stderr, testUsage)
		return nil, exitUsage, false
	}
	if cfg.maxEvents <= 0 {
		fmt.Fprintf(stderr, "avcheck test: -max-events %d: want at least 1\n", cfg.maxEvents)
		return nil, exitUsage, false
	}
	if cfg.p < 1 {
		fmt.Fprintf(stderr, "avcheck test: -p %d: want at least 1\n", cfg.p)
		return nil, exitUsage, false
	}
	if cfg.timeout <= 0 {
		fmt.Fprintln(stderr, "avcheck test: -timeout must be positive")
		return nil, exitUsage, false
	}
	if cfg.replayTimeout <= 0 {
		fmt.Fprintln(stderr, "avcheck test: -replay-timeout must be positive")
		return nil, exitUsage, false
	}
	if cfg.recorder != "delve" && cfg.recorder != "instrument" {
		fmt.Fprintf(stderr, "avcheck test: -recorder %q: want instrument or delve\n", cfg.recorder)
		return nil, exitUsage, false
	}
	if code, err := cfg.precise.check(); err != nil {
		fmt.Fprintf(stderr, "avcheck test: %v\n", err)
		return nil, code, false
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "recorder":
			cfg.recorderSet = true
		case "precise", "solver", "window", "budget":
			cfg.preciseArgs = append(cfg.preciseArgs, "-"+f.Name+"="+f.Value.String())
		}
	})
	if *count < 1 {
		fmt.Fprintf(stderr, "avcheck test: -count %d: want at least 1\n", *count)
		return nil, exitUsage, false
	}
	if *parallel < 0 {
		fmt.Fprintf(stderr, "avcheck test: -parallel %d: want at least 1\n", *parallel)
		return nil, exitUsage, false
	}
	if len(pos) == 0 {
		pos = []string{"."}
	}
	cfg.patterns = pos
	for _, f := range []struct {
		set  bool
		flag string
	}{
		{*short, "-test.short"},
		{*verbose, "-test.v"},
		{*count != 1, "-test.count=" + strconv.Itoa(*count)},
		{*failfast, "-test.failfast"},
		{*parallel > 0, "-test.parallel=" + strconv.Itoa(*parallel)},
		{*skip != "", "-test.skip=" + *skip},
		{*cpu != "", "-test.cpu=" + *cpu},
	} {
		if f.set {
			cfg.testArgs = append(cfg.testArgs, f.flag)
		}
	}
	cfg.testArgs = append(cfg.testArgs, rest...)
	return cfg, 0, true
}

// testPackage is a package that avcheck test records.
type testPackage struct {
	ImportPath   string
	Dir          string
	TestGoFiles  []string
	XTestGoFiles []string
	Error        *struct{ Err string }
}

// listTestPackages resolves the patterns with go list.
func listTestPackages(ctx context.Context, dir, tags string, patterns []string) ([]testPackage, error) {
	args := append([]string{"list", "-e", "-json=ImportPath,Dir,TestGoFiles,XTestGoFiles,Error"}, record.TagFlags(tags)...)
	cmd := exec.CommandContext(ctx, "go", append(args, patterns...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, err
	}
	var pkgs []testPackage
	dec := json.NewDecoder(&out)
	for {
		var p testPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// testResult is what avcheck test shows of one package.
type testResult struct {
	code     int
	output   string // the recording's and the report's lines
	findings int
	elapsed  time.Duration
	// testsFailed says the test binary failed: it ended with a status
	// other than 0, or was killed.
	testsFailed bool
	doc         *report.Document // the package's report, nil if none was written
	notStarted  bool             // interrupted before it began
	buildFailed bool             // the package or its tests do not compile
	// unreached counts the top-level tests that no recording reached
	// before its -max-events ran out.
	unreached int
}

func testStages(in *interrupts, args []string, stdout, stderr io.Writer) int {
	cfg, code, ok := parseTestArgs(args, stdout, stderr)
	if !ok {
		return code
	}
	dir := workDir()
	pkgs, err := listTestPackages(in.parent, dir, cfg.tags, cfg.patterns)
	if err != nil {
		fmt.Fprintf(stderr, "avcheck test: %v\n", err)
		return exitError
	}
	if len(pkgs) == 0 {
		fmt.Fprintf(stderr, "avcheck test: no packages to test in %s\n", strings.Join(cfg.patterns, " "))
		return exitError
	}
	tmp, err := os.MkdirTemp("", "avcheck-test-")
	if err != nil {
		fmt.Fprintf(stderr, "avcheck test: %v\n", err)
		return exitError
	}
	defer os.RemoveAll(tmp)

	results := make([]chan testResult, len(pkgs))
	sem := make(chan struct{}, cfg.p)
	// The replays of all the packages share one bound.
	shared := &testShared{replaySlots: make(chan struct{}, runtime.GOMAXPROCS(0)), memory: newMemBudget(predictionBudget())}
	for i := range pkgs {
		results[i] = make(chan testResult, 1)
	}
	// The packages begin in their order, as go test begins them.
	go func() {
		for i, p := range pkgs {
			sem <- struct{}{}
			if in.stopped() {
				// Interrupted: the packages not yet begun are not.
				<-sem
				results[i] <- testResult{code: exitError, notStarted: true}
				continue
			}
			go func() {
				defer func() { <-sem }()
				results[i] <- testOne(in, cfg, p, filepath.Join(tmp, strconv.Itoa(i)+".json"), shared)
			}()
		}
	}()
	var tested, withFindings, findings, failed, testsFailed, unreached, unreachedPkgs int
	var docs []*report.Document
	var dirs []string
	for i, p := range pkgs {
		r := <-results[i]
		if r.doc != nil {
			docs = append(docs, r.doc)
			dirs = append(dirs, filepath.Clean(p.Dir))
		}
		fmt.Fprint(stdout, r.output)
		if r.unreached > 0 {
			unreached += r.unreached
			unreachedPkgs++
		}
		switch {
		case r.code == -1:
			fmt.Fprintf(stdout, "?   \t%s\t[no test files]\n", p.ImportPath)
			continue
		case r.notStarted:
			failed++
			fmt.Fprintf(stdout, "FAIL\t%s\t[not recorded: interrupted before it began]\n", p.ImportPath)
		case r.buildFailed:
			failed++
			fmt.Fprintf(stdout, "FAIL\t%s\t[build failed]\n", p.ImportPath)
		case r.code == exitError || r.code == exitUsage:
			failed++
			fmt.Fprintf(stdout, "FAIL\t%s\t%.3fs\t[not recorded]\n", p.ImportPath, r.elapsed.Seconds())
		case r.testsFailed:
			testsFailed++
			findings += r.findings
			if r.findings > 0 {
				withFindings++
			}
			fmt.Fprintf(stdout, "FAIL\t%s\t%.3fs\t[tests failed; %s]\n", p.ImportPath, r.elapsed.Seconds(), plural(r.findings, "finding"))
		case r.findings > 0:
			withFindings++
			findings += r.findings
			fmt.Fprintf(stdout, "av  \t%s\t%.3fs\t%s\n", p.ImportPath, r.elapsed.Seconds(), plural(r.findings, "finding"))
		default:
			fmt.Fprintf(stdout, "ok  \t%s\t%.3fs\n", p.ImportPath, r.elapsed.Seconds())
		}
		tested++
	}
	fmt.Fprintf(stdout, "avcheck test: %s recorded, %s with findings (%s), %s whose tests failed, %s not recorded\n",
		plural(tested-failed, "package"), plural(withFindings, "package"), plural(findings, "finding"), plural(testsFailed, "package"), plural(failed, "package"))
	if unreached > 0 {
		fmt.Fprintf(stdout, "avcheck test: %s of %s not recorded: the recordings' -max-events ran out before them (the packages' lines above name them)\n",
			plural(unreached, "test"), plural(unreachedPkgs, "package"))
	}
	saveTestReport(stderr, cfg, dir, docs, dirs, failed, findings)
	switch {
	case failed > 0 || testsFailed > 0:
		return exitError
	case findings > 0:
		return exitFindings
	}
	return exitClean
}

// testOne records one package with avcheck run, its output captured, and
// counts its findings from the JSON report; code -1 says the package has
// no tests. shared is what all the packages share (testShared).
func testOne(in *interrupts, cfg *testConfig, p testPackage, reportPath string, shared *testShared) testResult {
	if len(p.TestGoFiles)+len(p.XTestGoFiles) == 0 || p.Error != nil {
		// go test builds a package without tests all the same, and
		// fails it if it does not compile. A package go list could not
		// load is built too, for the go command's messages, with paths
		// from the current directory, as go test shows them.
		r := buildOnly(in, p, cfg.tags)
		if r.code == -1 && p.Error != nil {
			r = testResult{code: exitError, output: p.Error.Err + "\n"}
		}
		return r
	}
	r := testRound(in, cfg, p, cfg.run, cfg.maxEvents, reportPath, shared)
	// A recording stopped at -max-events leaves the tests after the cut
	// unrecorded, and with them, in many suites, the concurrent ones,
	// which come after long serial ones: those are recorded again, while
	// a round reaches a test the rounds before did not.
	//
	// The recordings after the first share one -max-events, so that a
	// package costs at most about twice the events of one recording: a
	// suite whose every test passes the limit on its own records the
	// tests the first recording did not reach once, up to that limit.
	// Each takes half of what is left, the last all of it: a test that
	// alone passes its share (one whose goroutines never end, say, as
	// a test of a cache's Stop leaves them) leaves the other half to
	// the tests after it, which the next recording skips it for.
	reached := slices.Clone(r.ended.Reached)
	budget := cfg.maxEvents
	for round, cut := 2, r.ended.CutAtLimit; cut && round <= maxRounds && budget > 0 && !in.stopped(); round++ {
		rest := testsLeft(r.ended.Tests, reached, cfg)
		if len(rest) == 0 {
			break
		}
		limit := roundLimit(budget, round)
		r.output += fmt.Sprintf("avcheck test: recording again the %s that the recording did not reach, up to %d probe events (%d are left of the one more -max-events that the recordings again share): %s\n",
			plural(len(rest), "test"), limit, budget, strings.Join(rest, ", "))
		next := testRound(in, cfg, p, runPattern(rest, cfg.run), limit, reportPath+"."+strconv.Itoa(round), shared)
		r.merge(next, cfg.all)
		reached = append(reached, next.ended.Reached...)
		if !next.ended.CutAtLimit {
			// A recording not cut ran all it was asked to.
			reached = append(reached, rest...)
		}
		cut = next.ended.CutAtLimit && len(next.ended.Reached) > 0
		switch {
		case next.ended.CutAtLimit:
			budget -= limit
		case next.doc == nil:
			budget = 0
		default:
			budget -= min(limit, int64(next.doc.Stats.Events))
		}
	}
	// What the recordings did not reach is said, not left to look like
	// a clean run.
	if rest := testsLeft(r.ended.Tests, reached, cfg); r.ended.CutAtLimit && len(rest) > 0 && !in.stopped() {
		r.output += fmt.Sprintf("avcheck test: not recorded: the %s that no recording reached before its -max-events ran out: %s (a larger -max-events, or -run, records them)\n",
			plural(len(rest), "test"), strings.Join(rest, ", "))
		r.unreached = len(rest)
	}
	return r.testResult
}

// maxRounds bounds the recordings of one package's tests.
const maxRounds = 8

// minRoundEvents is the least share of -max-events that a recording
// after the first takes, when it does not take all that is left.
const minRoundEvents = 100000

// roundLimit returns the probe events that recording round (2 for the
// first after the first) may take of the budget left: half, or all of it
// for the last round and when half is less than minRoundEvents.
func roundLimit(budget int64, round int) int64 {
	if half := budget / 2; round < maxRounds && half >= minRoundEvents {
		return half
	}
	return budget
}

// roundResult is one recording of a package's tests, with its outcome.
type roundResult struct {
	testResult
	ended record.Outcome
}

// testRound records the tests of p that run matches with avcheck run,
// up to maxEvents probe events, its output captured, and counts its
// findings from the JSON report.
func testRound(in *interrupts, cfg *testConfig, p testPackage, run string, maxEvents int64, reportPath string, shared *testShared) *roundResult {
	args := []string{"-report", reportPath, "-timeout", cfg.timeout.String(), "-max-events", strconv.FormatInt(maxEvents, 10),
		"-replay=" + strconv.FormatBool(cfg.replay), "-replay-timeout", cfg.replayTimeout.String()}
	if cfg.recorderSet {
		args = append(args, "-recorder="+cfg.recorder)
	}
	if run != "" {
		args = append(args, "-run", run)
	}
	if cfg.all {
		args = append(args, "-all")
	}
	if cfg.tags != "" {
		args = append(args, "-tags", cfg.tags)
	}
	args = append(append(args, cfg.preciseArgs...), p.Dir)
	if len(cfg.testArgs) > 0 {
		args = append(append(args, "--"), cfg.testArgs...)
	}
	var out bytes.Buffer
	start := time.Now()
	r := new(roundResult)
	code := runStages(in, args, &out, &out, &r.ended, shared)
	var kept strings.Builder
	// The report is a temporary file, gone when avcheck test ends: the
	// line that names it for go vet is left out.
	hints := testHints(cfg, p, workDir())
	for line := range strings.SplitAfterSeq(out.String(), "\n") {
		if !strings.HasPrefix(line, "avcheck run: to see the findings as diagnostics:") {
			kept.WriteString(hints.Replace(line))
		}
	}
	// A test binary that ran to its end with a status other than 0 (a
	// test failed, or panicked), or that was killed (at its time limit,
	// by a signal, by an interrupt), but not by the recorder itself.
	ended := r.ended
	testsFailed := ended.Complete && ended.Status != 0 || !ended.Complete && ended.Message != "" && ended.Invalid == ""
	r.testResult = testResult{code: code, elapsed: time.Since(start), testsFailed: testsFailed, buildFailed: ended.NotBuilt}
	if data, err := os.ReadFile(reportPath); err == nil {
		var doc report.Document
		if json.Unmarshal(data, &doc) == nil {
			r.doc = &doc
			for _, f := range doc.Findings {
				if f.Dropped == "" || cfg.all {
					r.findings++
				}
			}
		}
	}
	r.output = kept.String()
	return r
}

// merge adds a later round's output, findings and figures to r's; all
// is -all.
func (r *roundResult) merge(next *roundResult, all bool) {
	r.output += next.output
	r.elapsed += next.elapsed
	r.testsFailed = r.testsFailed || next.testsFailed
	if next.code != exitClean && next.code != exitFindings || r.code == exitClean {
		r.code = next.code
	}
	switch {
	case next.doc == nil:
	case r.doc == nil:
		r.doc, r.findings = next.doc, next.findings
	default:
		// A finding the rounds before reported too counts once, with
		// the instances and the tests of every round, at the highest
		// level a round gave it.
		seen := make(map[string]int)
		for i, f := range r.doc.Findings {
			seen[findingKey(f)] = i
		}
		counted := func(f report.Finding) bool { return f.Dropped == "" || all }
		for _, f := range next.doc.Findings {
			i, ok := seen[findingKey(f)]
			if !ok {
				r.doc.Findings = append(r.doc.Findings, f)
				if counted(f) {
					r.findings++
				}
				continue
			}
			old := &r.doc.Findings[i]
			count, tests := old.Count+f.Count, old.Tests
			for _, t := range f.Tests {
				if !slices.Contains(tests, t) {
					tests = append(tests, t)
				}
			}
			if higher(f, *old) {
				if counted(f) && !counted(*old) {
					r.findings++
				}
				*old = f
			}
			old.Count, old.Tests = count, tests
		}
		have := make(map[string]bool)
		for _, f := range r.doc.Files {
			have[f.File] = true
		}
		for _, f := range next.doc.Files {
			if !have[f.File] {
				r.doc.Files = append(r.doc.Files, f)
			}
		}
		r.doc.Stats.Events += next.doc.Stats.Events
		r.doc.Stats.Seconds += next.doc.Stats.Seconds
	}
}

// higher says whether finding a is at a higher level than b, the same
// finding of another recording: reported where b was dropped, or at a
// later level of predicted, filtered, proven and replayed.
func higher(a, b report.Finding) bool {
	if (a.Dropped == "") != (b.Dropped == "") {
		return a.Dropped == ""
	}
	rank := func(level string) int {
		for l := predict.LevelPredicted; l <= predict.LevelReplayed; l++ {
			if l.String() == level {
				return int(l)
			}
		}
		return 0
	}
	return rank(a.Level) > rank(b.Level)
}

// testsLeft returns the top-level tests of a package that the recordings
// so far did not reach and that -run and -skip select.
func testsLeft(tests, reached []string, cfg *testConfig) []string {
	run, skip := topPattern(cfg.run), topPattern(cfg.skip)
	if strings.Contains(cfg.skip, "/") {
		skip = nil // it skips subtests, not top-level tests
	}
	var rest []string
	for _, name := range tests {
		if slices.Contains(reached, name) || run != nil && !run.MatchString(name) || skip != nil && skip.MatchString(name) {
			continue
		}
		rest = append(rest, name)
	}
	return rest
}

// topPattern compiles the part of a -run or -skip pattern that matches
// top-level tests (before its first slash); nil for none.
func topPattern(pattern string) *regexp.Regexp {
	if pattern == "" {
		return nil
	}
	top, _, _ := strings.Cut(pattern, "/")
	re, err := regexp.Compile(top)
	if err != nil {
		return nil
	}
	return re
}

// runPattern returns a -run pattern that matches exactly the tests
// names, and the subtests of them that -run's pattern run selects.
func runPattern(names []string, run string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	pat := "^(" + strings.Join(quoted, "|") + ")$"
	if _, sub, ok := strings.Cut(run, "/"); ok {
		pat += "/" + sub
	}
	return pat
}

// testHints turns the lines of avcheck run's output on package p into
// avcheck test's, run in dir: they begin "avcheck test:", and the hints
// at flags that avcheck test has not point elsewhere: its -v is go
// test's, so the accesses not recorded are listed by avcheck run -v on
// the package; a witness cut short is whole in the report avcheck test
// writes (-json is avcheck run's).
func testHints(cfg *testConfig, p testPackage, dir string) *strings.Replacer {
	see := "(see avcheck run -json " + shortPath(dir, p.Dir) + ")"
	if path, _ := testReportPath(cfg, dir); path != "" {
		see = "(see " + shortPath(dir, path) + ")"
	}
	return strings.NewReplacer(
		"avcheck run: ", "avcheck test: ",
		"; -v lists them", "; avcheck run -v "+shortPath(dir, p.Dir)+" lists them",
		"(see -json)", see,
	)
}

// shortPath returns path relative to dir when it is below dir ("./" and
// the rest, as the go command takes a package's directory), else as it
// is.
func shortPath(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	switch {
	case err != nil || rel != "." && !filepath.IsLocal(rel):
		return path
	case rel == ".":
		return rel
	}
	return "." + string(filepath.Separator) + rel
}

// buildOnly compiles p, a package without tests, with the build tags
// tags, as go test does: code -1 if it builds, else the compiler's
// errors and buildFailed.
func buildOnly(in *interrupts, p testPackage, tags string) testResult {
	ctx, cancel := in.stage()
	defer cancel()
	start := time.Now()
	// From the current directory, as the recording's build, so that the
	// compiler's positions are relative to it.
	err := record.Check(ctx, workDir(), p.Dir, tags)
	if err == nil {
		return testResult{code: -1}
	}
	var be *record.BuildError
	if errors.As(err, &be) {
		return testResult{code: exitError, output: be.Output, elapsed: time.Since(start), buildFailed: true}
	}
	return testResult{code: exitError, output: fmt.Sprintf("avcheck test: %s: %v\n", p.ImportPath, err), elapsed: time.Since(start)}
}

// testReportPath returns the report that avcheck test writes for
// avreport, run in dir: -report, or the default one at the module root,
// into which the report of the packages recorded is merged (merge); ""
// if there is none.
func testReportPath(cfg *testConfig, dir string) (path string, merge bool) {
	if cfg.report != "" {
		return cfg.report, false
	}
	if root := avreport.ModuleRoot(dir); root != "" {
		return filepath.Join(root, avreport.DefaultReport), true
	}
	return "", false
}

// saveTestReport writes the report of all the packages recorded (their
// findings, the files they name, their figures summed) for avreport, and
// says how to see it. Merged into the module's report, the findings of
// the packages not recorded (failed) stay as the report had them; in a
// report of its own (-report), they are missing, and it says so.
func saveTestReport(stderr io.Writer, cfg *testConfig, dir string, docs []*report.Document, dirs []string, failed, findings int) {
	path, merge := testReportPath(cfg, dir)
	root := avreport.ModuleRoot(dir)
	if path == "" || len(docs) == 0 {
		return
	}
	switch {
	case failed > 0 && merge:
		fmt.Fprintf(stderr, "avcheck test: the report for go vet keeps what it held of the %s not recorded\n", plural(failed, "package"))
	case failed > 0:
		fmt.Fprintf(stderr, "avcheck test: the report for go vet holds the packages recorded only, not the %s not recorded\n", plural(failed, "package"))
	}
	all := &report.Document{Version: report.Version, Findings: []report.Finding{}, Files: []report.File{}}
	files := make(map[string]bool)
	for _, d := range docs {
		all.Findings = append(all.Findings, d.Findings...)
		for _, f := range d.Files {
			if !files[f.File] {
				files[f.File] = true
				all.Files = append(all.Files, f)
			}
		}
		all.Stats.Events += d.Stats.Events
		all.Stats.Goroutines += d.Stats.Goroutines
		all.Stats.Variables += d.Stats.Variables
		all.Stats.Seconds += d.Stats.Seconds
	}
	slices.SortFunc(all.Files, func(a, b report.File) int { return strings.Compare(a.File, b.File) })
	if merge {
		all = mergeReport(path, root, all, dirs)
	}
	hash, err := writeReport(path, all)
	if err != nil {
		fmt.Fprintf(stderr, "avcheck test: writing the report: %v\n", err)
		return
	}
	if findings > 0 {
		fmt.Fprintf(stderr, "avcheck test: to see the findings as diagnostics: %s\n", vetCommand(cfg.report, hash, cfg.patterns...))
	}
}
