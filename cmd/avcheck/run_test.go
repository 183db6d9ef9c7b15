package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// These tests run avcheck run end to end on the programs of
// testdata/record: plan, build, record under Delve, predict. They skip,
// saying why, only when the system does not permit ptrace.

type runResult struct {
	code   int
	stdout string
	stderr string
	doc    report.Document
	report string // where -report wrote the JSON report
}

// avcheckRun runs "avcheck run -json args..." from the module root,
// with -replay=false unless args say otherwise.
func avcheckRun(t *testing.T, ctx context.Context, args ...string) runResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// runMain resolves the package in the current directory; the tests
	// name packages from the module root, as a user would.
	// The report goes to a temporary file, not the module's
	// .avcheck/report.json, which the suite's avreport would show in the
	// other tests of this package.
	reportPath := filepath.Join(t.TempDir(), "report.json")
	args = append([]string{"-json", "-report", reportPath}, args...)
	// The replay, on by default, raises the findings whose witness it
	// forces to replayed; the tests of the other stages leave it out,
	// and those of the replay (replay_test.go) ask for it.
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-replay") }) {
		args = append([]string{"-replay=false"}, args...)
	}
	for i, a := range args {
		if strings.HasPrefix(a, "./") {
			args[i] = filepath.Join(root, a)
		}
	}
	code := runMain(ctx, args, &stdout, &stderr)
	res := runResult{code: code, stdout: stdout.String(), stderr: stderr.String(), report: reportPath}
	if strings.Contains(res.stderr, "does not permit ptrace") {
		t.Skip("ptrace is not permitted here: " + strings.TrimSpace(res.stderr))
	}
	if code == exitClean || code == exitFindings {
		if err := json.Unmarshal(stdout.Bytes(), &res.doc); err != nil {
			t.Fatalf("avcheck run %v: the report is not JSON: %v\n%s", args, err, res.stdout)
		}
	}
	return res
}

// summary is a finding as the tests state it: pattern, variable and the
// file:line of each access, in order.
func summary(f report.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", f.Level, f.Pattern, f.Variable)
	for _, a := range f.Accesses {
		fmt.Fprintf(&b, " %s:%d:%s", filepath.Base(a.File), a.Line, a.Op)
	}
	if f.Dropped != "" {
		b.WriteString(" dropped")
	}
	return b.String()
}

func summaries(doc report.Document) []string {
	var out []string
	for _, f := range doc.Findings {
		out = append(out, summary(f))
	}
	return out
}

func wantFindings(t *testing.T, r runResult, want ...string) {
	t.Helper()
	got := summaries(r.doc)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s\nstderr:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), r.stderr)
	}
}

// The split counter: serial or not, the recorded run admits the
// interleaving that loses an increment.
func TestRunCounter(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "./testdata/record/counter")
	if r.code != exitFindings {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitFindings, r.stderr)
	}
	wantFindings(t, r, "proven R-W-W c.n counter.go:16:rd counter.go:19:wr counter.go:19:wr")
	if !strings.Contains(r.stderr, "avcheck run: the program exited normally;") {
		t.Errorf("stderr does not say how the run ended:\n%s", r.stderr)
	}
	// The report is also written where -report says (by default at the
	// module root: TestRunThenVet), and the go vet command printed last
	// names it.
	data, err := os.ReadFile(r.report)
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Document
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != report.Version {
		t.Fatalf("%s: %v (version %d)", r.report, err, doc.Version)
	}
	if want := " -avreport.report=" + shellQuote(r.report) + " -avreport.hash="; !strings.Contains(r.stderr, want) {
		t.Errorf("the printed go vet command does not name the report with %q:\n%s", want, r.stderr)
	}
}

// The fixed withdrawal: one critical section, nothing to report even
// among the findings the filters drop.
func TestRunFixed(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "-all", "./testdata/record/fixed")
	if r.code != exitClean {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitClean, r.stderr)
	}
	wantFindings(t, r)
}

// What was not recorded: a run that recorded no access says so and why,
// and the accesses of the functions the run entered that were not
// recorded are counted, and listed with -v.
func TestRunUnrecorded(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "./testdata/record/counter", "-run", "^TestNoSuchTest$")
	if r.code != exitClean {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitClean, r.stderr)
	}
	for _, want := range []string{
		"avcheck run: no access of the packages under test was recorded: none of the ",
		" probed ran (does -run select the test that makes them?)\n",
		"avcheck run: not recorded: no access of the packages under test in the functions the run entered\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	r = avcheckRun(t, context.Background(), "-v", "./testdata/record/unrecorded")
	if r.code != exitClean {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitClean, r.stderr)
	}
	// The sites are shown relative to the current directory when they
	// are below it, and this test runs in cmd/avcheck.
	// count's n is its own until the go statement's literal captures
	// it; from there on it is shared and recorded.
	want := "avcheck run: not recorded: 1 access of the packages under test in the functions the run entered (1 not shared)\n" +
		"\t/testdata/record/unrecorded/main.go:15:2: n: not shared\n"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.ReplaceAll(r.stderr, root, ""); !strings.Contains(got, want) || strings.Contains(got, "no access of the packages under test was recorded") {
		t.Errorf("stderr:\n%s\nwant it to hold:\n%s", got, want)
	}
}

// The bundled bank: Withdraw's check (Balance) and act (Add) are two
// critical sections. Every finding is about a.balance between them; when
// the recorded run interleaved the two withdrawals (the test fails under
// the recorder), the violation is reported. A serial run of TestTransfer
// has the second withdrawal see 40 and not write at all, so there is no
// write to interleave (see docs/run.md).
func TestRunBankTransfer(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "-all", "./testdata/example/bank", "-run", "TestTransfer")
	if r.code != exitClean && r.code != exitFindings {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range r.doc.Findings {
		if f.Variable != "a.balance" {
			t.Errorf("unexpected finding %s", summary(f))
		}
	}
	if strings.Contains(r.stderr, "exited with status 1") && r.code != exitFindings {
		t.Errorf("the recorded run lost an update, but nothing is reported:\n%s", strings.Join(summaries(r.doc), "\n"))
	}
}

// The bank's Withdraw with money for both withdrawals (the example
// package imported from another one, so its accesses are probed too).
// Whatever the recorded order, the check-then-act on a.balance is found;
// AVFilter may drop it when the second check read the first withdrawal's
// write, so -all shows it either way.
func TestRunBankImported(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "-all", "./testdata/record/banktwo")
	found := false
	for _, f := range r.doc.Findings {
		if f.Variable != "a.balance" {
			t.Errorf("unexpected finding %s", summary(f))
		}
		if len(f.Accesses) == 3 && f.Accesses[0].Line == 22 && f.Accesses[2].Line == 29 {
			found = true
		}
	}
	if !found {
		t.Errorf("no finding between bank.go:22 and bank.go:29:\n%s\n%s", strings.Join(summaries(r.doc), "\n"), r.stderr)
	}
}

// A run that ends badly is still predicted on, and the trace recorded so
// far is kept and valid. (Interruption, which takes the same path as the
// timeout, and the child's removal are tested in dynamic/record.)
func TestRunEndsBadly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg, extra, says, file string
		line0, line1           int
	}{
		{"crash", "", "exited with status 2 (a panic", "crash_test.go", 17, 20},
		{"exit", "", "exited with status 3", "exit_test.go", 18, 21},
		{"deadlock", "", "exited with status 2 (a panic or a fatal error such as a deadlock", "deadlock_test.go", 17, 20},
		{"forever", "-timeout=2s", "ran past its time limit and was killed", "main.go", 14, 17},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "run.avt")
			args := []string{"-o", out, "./testdata/record/" + tc.pkg}
			if tc.extra != "" {
				args = append([]string{tc.extra}, args...)
			}
			r := avcheckRun(t, context.Background(), args...)
			checkEndedBadly(t, r, tc.says, out, fmt.Sprintf("proven R-W-W c.n %s:%d:rd %s:%d:wr %s:%d:wr", tc.file, tc.line0, tc.file, tc.line1, tc.file, tc.line1))
		})
	}
}

func checkEndedBadly(t *testing.T, r runResult, says, out, want string) {
	t.Helper()
	if !strings.Contains(r.stderr, says) {
		t.Errorf("stderr does not say %q:\n%s", says, r.stderr)
	}
	if r.code != exitFindings {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitFindings, r.stderr)
	}
	wantFindings(t, r, want)
	f, err := trace.Open(out, trace.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Validate(tr); err != nil {
		t.Errorf("the kept trace is not valid: %v", err)
	}
	if len(tr.Events) != r.doc.Stats.Events {
		t.Errorf("the kept trace has %d events, the report says %d", len(tr.Events), r.doc.Stats.Events)
	}
}

func TestRunBuildError(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "./testdata/record/broken")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d", r.code, exitError)
	}
	if !strings.Contains(r.stderr, `broken.go:3:23: cannot use "x"`) || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("want the compiler's message alone, on one line; got:\n%s", r.stderr)
	}
}

func TestRunUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"-h"}, exitClean, "usage: avcheck run [flags] [package] [-- program args]"},
		{[]string{"-bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"a", "b"}, exitUsage, "one package at a time, not 2"},
		{[]string{"-timeout=0", "."}, exitUsage, "-timeout must be positive"},
		{[]string{"-format=std", "."}, exitUsage, `-format "std": want native or text`},
		{[]string{"-solver=yices", "."}, exitUsage, `unknown solver "yices" (want gini, z3 or cvc5)`},
		{[]string{"-window=-1", "."}, exitUsage, "-window -1: want a positive number of events"},
		{[]string{"./..."}, exitUsage, "avcheck run: ./... can name many packages, and avcheck run records the tests of one: name one package (avcheck run ./pkg -run TestX)\n"},
		{[]string{"-run", "TestX", "std"}, exitUsage, "avcheck run: std can name many packages"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.says) {
			t.Errorf("avcheck run %v: exit %d, output:\n%s%s\nwant exit %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.says)
		}
	}
}

// What goes wrong before the recording starts is one line that says what
// happened, with avcheck run's prefix unless it is the compiler's.
func TestRunMessages(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // so that the packages are named as a user names them
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		args []string
		want string
	}{
		{context.Background(), []string{"./testdata/record/nosuch"}, "avcheck run: ./testdata/record/nosuch: no such directory\n"},
		{context.Background(), []string{"./README.md"}, "avcheck run: ./README.md is a file: name the package's directory\n"},
		{context.Background(), []string{"example.com/nosuch"}, "avcheck run: no required module provides package example.com/nosuch; to add it:\n\tgo get example.com/nosuch\n"},
		{cancelled, []string{"./testdata/record/counter"}, "avcheck run: interrupted while loading ./testdata/record/counter; nothing was recorded\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(tc.ctx, tc.args, &stdout, &stderr)
		if code != exitError || stdout.Len() != 0 || stderr.String() != tc.want {
			t.Errorf("avcheck run %v: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout.String(), stderr.String(), exitError, tc.want)
		}
	}
}
