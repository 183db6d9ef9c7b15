package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The two recorders write one trace model, and on every corpus program
// they give the same findings, at the same levels (TestCorpus compares
// them): the Delve recorder (-recorder=delve) and the instrumenting one
// (-recorder=instrument, the default).
//
// One difference is allowed, in names only: the Delve recorder names a map
// element by the key's value (c.m["k"]), which it reads from the
// program's memory, and the instrumenting recorder by the key's
// expression (c.m[key]), since its runtime records a hash of the key.

// mapKey is the key of a map element in a finding's variable.
var mapKey = regexp.MustCompile(`\[[^\]*]+\]`)

// The instrumenting recorder keeps what a run recorded however it ends:
// its runtime writes the events into a shared file mapping as they
// happen, so a panic, an os.Exit, a deadlock and a kill at the time limit
// all leave them in the file.
func TestRunInstrumentEndsBadly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg          string
		extra        []string
		says, file   string
		line0, line1 int
	}{
		{"crash", nil, "exited with status 2 (a panic", "crash_test.go", 17, 20},
		{"exit", nil, "exited with status 3", "exit_test.go", 18, 21},
		{"deadlock", nil, "exited with status 2 (a panic or a fatal error such as a deadlock", "deadlock_test.go", 17, 20},
		// The trace is bounded, so that how many events a fast machine
		// records in 2s does not decide how far apart the finding's
		// events are, and so its level; and long enough for both
		// goroutines to be in it on a loaded machine (100,000 probe
		// events took 10 ms, a scheduler's time slice: one goroutine
		// once ran alone until the limit).
		{"forever", []string{"-timeout=2s", "-max-events=1000000"}, "ran past its time limit and was killed", "main.go", 14, 17},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "run.avt")
			args := append(slices.Clone(tc.extra), "-recorder=instrument", "-o", out, "./testdata/record/"+tc.pkg)
			r := avcheckRun(t, context.Background(), args...)
			checkEndedBadly(t, r, tc.says, out, fmt.Sprintf("proven R-W-W c.n %s:%d:rd %s:%d:wr %s:%d:wr", tc.file, tc.line0, tc.file, tc.line1, tc.file, tc.line1))
		})
	}
}

// A package that does not compile gives the compiler's message at the
// user's position with either recorder.
func TestRunInstrumentBuildError(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "-recorder=instrument", "./testdata/record/broken")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	if !strings.Contains(r.stderr, `broken.go:3:23: cannot use "x"`) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("want the compiler's message alone, on one line; got:\n%s", r.stderr)
	}
}

// Both recorders record the order in which the testing package runs the
// tests (testorder.go in dynamic/record): top-level tests and subtests that
// run one after another, and a test before and after its subtests, each
// update a package-level counter and give no finding; a test's update
// after it started its parallel subtests happens before they go on; two
// parallel tests, or two parallel subtests, that split an update of
// another counter still give their finding. Package initialisation
// happens before the tests, and the examples run after them
// (testdata/record/initorder); so does what TestMain does before m.Run,
// and TestMain goes on after them (testdata/record/testmain).
func TestRunTestOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg  string
		want []string
	}{
		{"seqtests", []string{"proven R-W-W shared seq_test.go:33:rd seq_test.go:36:wr seq_test.go:36:wr"}},
		{"subtests", []string{"proven R-W-W shared sub_test.go:44:rd sub_test.go:47:wr sub_test.go:47:wr"}},
		{"initorder", nil},
		// TestMain's write before m.Run and read after it race with no
		// test; its parallel tests still race with each other.
		{"testmain", []string{"proven R-W-W shared main_test.go:51:rd main_test.go:54:wr main_test.go:54:wr"}},
	} {
		for _, recorder := range []string{"delve", "instrument"} {
			t.Run(tc.pkg+"/"+recorder, func(t *testing.T) {
				t.Parallel()
				r := avcheckRun(t, context.Background(), "-recorder="+recorder, "./testdata/record/"+tc.pkg)
				want := exitFindings
				if len(tc.want) == 0 {
					want = exitClean
				}
				if r.code != want {
					t.Fatalf("exit %d, want %d\n%s", r.code, want, r.stderr)
				}
				if got := summaries(r.doc); !slices.Equal(got, tc.want) {
					t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
			})
		}
	}
}

// Correct code gives no finding with either recorder: sync/atomic used
// well (testdata/record/atomicops: an atomic operation inside a critical
// section is one access, not its event and its access, and two atomic
// adds that claim work are not a region another add can break), and a
// value handed over in a select's send case (testdata/record/selectsend,
// whose send the instrumenting recorder records at the start of the
// case's body).
func TestRunCorrectNoFinding(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"atomicops", "selectsend"} {
		for _, recorder := range []string{"delve", "instrument"} {
			t.Run(pkg+"/"+recorder, func(t *testing.T) {
				t.Parallel()
				r := avcheckRun(t, context.Background(), "-recorder="+recorder, "./testdata/record/"+pkg)
				if r.code != exitClean {
					t.Fatalf("exit %d, want %d\n%s", r.code, exitClean, r.stderr)
				}
				if got := summaries(r.doc); len(got) != 0 {
					t.Errorf("findings:\n%s\nwant none", strings.Join(got, "\n"))
				}
			})
		}
	}
}

// A package outside the main module, which the instrumenting recorder
// does not rewrite, is recorded under Delve by default, with a line that
// says so; asked for by name, the instrumenting recorder refuses it.
func TestRunOutsideMainModule(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "-run", "^$", "errors")
	if r.code != exitClean {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitClean, r.stderr)
	}
	if !strings.Contains(r.stderr, "avcheck run: recording under Delve (-recorder=delve), much more slowly: errors is not in the main module\n") {
		t.Errorf("stderr does not say the package is recorded under Delve:\n%s", r.stderr)
	}
	r = avcheckRun(t, context.Background(), "-recorder=instrument", "-run", "^$", "errors")
	want := "avcheck run: errors is not in a module: the instrumenting recorder rewrites the packages of the main module only (use -recorder=delve)\n"
	if r.code != exitError || r.stderr != want {
		t.Errorf("-recorder=instrument: exit %d, stderr\n%s\nwant exit %d, stderr\n%s", r.code, r.stderr, exitError, want)
	}
}

// The recording runtime's own package is not instrumented (its probes
// would record while pinned to a P): avcheck says so, and says that this,
// not -run, is why no probe ran.
func TestRunRuntimeItself(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "-recorder=instrument", "./dynamic/record/avrt")
	if r.code != exitClean {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitClean, r.stderr)
	}
	for _, want := range []string{
		"avcheck run: not instrumented, so not recorded: the files of github.com/avcheck/avcheck/dynamic/record/avrt: it is the recording runtime itself\n",
		" probed ran (files not instrumented are listed above)\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
}

// The accesses that the instrumenting recorder cannot probe are counted,
// and -v lists them with why: in testdata/record/inplace, the two reads
// of a case that calls.
func TestRunNotProbed(t *testing.T) {
	t.Parallel()
	want := "avcheck run: not instrumented, so not recorded: 2 accesses whose address cannot be evaluated before its statement"
	r := avcheckRun(t, context.Background(), "-replay=false", "./testdata/record/inplace")
	if !strings.Contains(r.stderr, want+"; -v lists them\n") {
		t.Errorf("stderr does not say %q:\n%s", want+"; -v lists them", r.stderr)
	}
	r = avcheckRun(t, context.Background(), "-replay=false", "-v", "./testdata/record/inplace")
	why := "read among calls, which could change it before the program reads it"
	for _, line := range []string{
		want + "\n",
		"/testdata/record/inplace/main.go:57:7: b.p (read): " + why + "\n",
		"/testdata/record/inplace/main.go:57:7: b.p.n (read): " + why + "\n",
	} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr does not say %q:\n%s", line, r.stderr)
		}
	}
}
