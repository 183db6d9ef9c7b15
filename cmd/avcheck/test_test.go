package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/report"
)

// avcheck test records every package matched, one line per package, go
// test's "no test files" line for a package without tests, and a summary.
func TestTestPackages(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	reportPath := filepath.Join(t.TempDir(), "report.json")
	var stdout, stderr bytes.Buffer
	code := testMain(context.Background(), []string{"-p", "1", "-report", reportPath, "-v", "-short",
		filepath.Join(root, "testdata/corpus/getset"), filepath.Join(root, "testdata/corpus/internal/...")}, &stdout, &stderr)
	out := stdout.String()
	if code != exitFindings {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, out, stderr.String())
	}
	for _, want := range []string{
		"=== RUN   TestBump", // -v reached the test binary
		"PASS\n",
		"getset/config.go:26:9: s.cfg:",
		"av  \tgithub.com/avcheck/avcheck/testdata/corpus/getset\t",
		"\t1 finding\n",
		"?   \tgithub.com/avcheck/avcheck/testdata/corpus/internal/turn\t[no test files]\n",
		"avcheck test: 1 package recorded, 1 package with findings (1 finding), 0 packages whose tests failed, 0 packages not recorded\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not hold %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-avreport.report=") {
		t.Errorf("the output names a temporary report:\n%s", out)
	}
	// avcheck test's -v is go test's: the hint names avcheck run's, on
	// the package; the lines of the recording are avcheck test's.
	if hint := "; avcheck run -v " + filepath.Join(root, "testdata/corpus/getset") + " lists them)"; !strings.Contains(out, hint) || strings.Contains(out, "; -v lists them") {
		t.Errorf("the output's hint at the accesses not recorded is not %q:\n%s", hint, out)
	}
	if strings.Contains(out, "avcheck run:") {
		t.Errorf("the output has lines of avcheck run's:\n%s", out)
	}

	// The report of all the packages, for avreport, and the go vet
	// command that shows it.
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range doc.Findings {
		a := f.Accesses[0]
		got = append(got, fmt.Sprintf("%s:%d %s %s", filepath.Base(a.File), a.Line, f.Kind, f.Level))
	}
	// Replayed: the turn scheduler that orders getset's test steps aside
	// when the test is replayed (AVCHECK_REPLAY), and the lost update shows.
	if want := []string{"config.go:26 atomicity replayed"}; !slices.Equal(got, want) {
		t.Errorf("the report's findings: %q, want %q", got, want)
	}
	if len(doc.Files) != 1 || doc.Files[0].SHA256 == "" {
		t.Errorf("the report's files: %+v, want config.go's with its hash", doc.Files)
	}
	vet := fmt.Sprintf("avcheck test: to see the findings as diagnostics: go vet -vettool=%s -avreport.report=%s -avreport.hash=%s ",
		vetTool(), shellQuote(reportPath), report.Hash(data))
	if !strings.Contains(stderr.String(), vet) {
		t.Errorf("standard error does not hold %q:\n%s", vet, stderr.String())
	}
}

func TestTestUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"-h"}, exitClean, "usage: avcheck test [flags] [packages]"},
		{[]string{"-bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"-p", "0"}, exitUsage, "-p 0: want at least 1"},
		{[]string{"-recorder", "gdb"}, exitUsage, `-recorder "gdb": want instrument or delve`},
		{[]string{"-count", "0"}, exitUsage, "-count 0: want at least 1"},
		{[]string{"-parallel", "-1"}, exitUsage, "-parallel -1: want at least 1"},
		{[]string{"./no/such/dir"}, exitError, "avcheck test:"},
		{[]string{"-window", "0"}, exitUsage, "-window 0: want a positive number of events"},
		{[]string{"-solver", "sat"}, exitUsage, `unknown solver "sat" (want gini, z3 or cvc5)`},
	} {
		var stdout, stderr bytes.Buffer
		code := testMain(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.says) {
			t.Errorf("avcheck test %v: exit %d, output:\n%s%s\nwant exit %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.says)
		}
	}
}

// avcheckTest runs avcheck test with args, a report of its own, and the
// packages in dirs (relative to the module root), and returns its exit
// status, standard output and standard error.
func avcheckTest(t *testing.T, args []string, dirs ...string) (code int, stdout, stderr string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	args = append(slices.Clone(args), "-report", filepath.Join(t.TempDir(), "report.json"))
	for _, d := range dirs {
		args = append(args, filepath.Join(root, d))
	}
	var out, errb bytes.Buffer
	code = testMain(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// A package that does not compile, with tests or without, fails as go
// test fails it: the compiler's errors (positions from the current
// directory), a FAIL line, exit 1; one without tests that compiles has
// its "no test files" line; the packages recorded are recorded, and
// their report is written all the same, saying what it lacks.
func TestTestBuildOnly(t *testing.T) {
	t.Parallel()
	code, out, stderr := avcheckTest(t, []string{"-replay=false"}, "testdata/broken", "testdata/brokentest", "testdata/corpus/internal/turn", "testdata/corpus/getset")
	if code != exitError {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitError, out, stderr)
	}
	for _, want := range []string{
		"# github.com/avcheck/avcheck/testdata/broken\n",
		`../../testdata/broken/broken.go:3:23: cannot use "x" (untyped string constant) as int value in return statement`,
		"FAIL\tgithub.com/avcheck/avcheck/testdata/broken\t[build failed]\n",
		"../../testdata/brokentest/brokentest.go:6:27: undefined: undefinedValue",
		"FAIL\tgithub.com/avcheck/avcheck/testdata/brokentest\t[build failed]\n",
		"?   \tgithub.com/avcheck/avcheck/testdata/corpus/internal/turn\t[no test files]\n",
		"av  \tgithub.com/avcheck/avcheck/testdata/corpus/getset\t",
		"avcheck test: 1 package recorded, 1 package with findings (1 finding), 0 packages whose tests failed, 2 packages not recorded\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not hold %q:\n%s", want, out)
		}
	}
	if want := "avcheck test: the report for go vet holds the packages recorded only, not the 2 packages not recorded\n"; !strings.Contains(stderr, want) {
		t.Errorf("standard error does not hold %q:\n%s", want, stderr)
	}
	if !strings.Contains(stderr, "avcheck test: to see the findings as diagnostics: go vet ") {
		t.Errorf("standard error does not give the go vet command of the report:\n%s", stderr)
	}
}

// -tags gives the build tags to every go command of avcheck test and
// avcheck run, as go test -tags does: a package whose tests are behind a
// tag has none without it, and with it its lost update is found.
func TestTags(t *testing.T) {
	t.Parallel()
	const pkg = "testdata/record/tagged"
	code, out, stderr := avcheckTest(t, []string{"-replay=false"}, pkg)
	if code != exitClean || !strings.Contains(out, "?   \tgithub.com/avcheck/avcheck/testdata/record/tagged\t[no test files]\n") {
		t.Errorf("without -tags: exit %d, want %d and no test files\nstdout:\n%s\nstderr:\n%s", code, exitClean, out, stderr)
	}
	code, out, stderr = avcheckTest(t, []string{"-replay=false", "-tags", "avcheck_tagged"}, pkg)
	if code != exitFindings || !strings.Contains(out, "counter.go:16:7: c.n: ") || !strings.Contains(out, "1 package with findings (1 finding)") {
		t.Errorf("avcheck test -tags: exit %d, want %d and the lost update\nstdout:\n%s\nstderr:\n%s", code, exitFindings, out, stderr)
	}
	r := avcheckRun(t, context.Background(), "-tags", "avcheck_tagged", "-recorder=delve", "./"+pkg)
	if r.code != exitFindings || len(r.doc.Findings) != 1 || r.doc.Findings[0].Level != "proven" {
		t.Errorf("avcheck run -tags -recorder=delve: exit %d, want %d and one proven finding\n%s", r.code, exitFindings, r.stderr)
	}
}

// A recording cut at -max-events is followed by one of the tests it did
// not reach, with -max-events of its own: the lost update of the test
// after a long one is found, and the parallel test that waited records
// too; -skip leaves a test out of it.
func TestTestRounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		skip     string
		code     int
		want     []string
		findings string
	}{
		{"TestLongToo", exitFindings, []string{
			"avcheck test: recording again the 2 tests that the recording did not reach, up to 20000 probe events (20000 are left of the one more -max-events that the recordings again share): TestLost, TestWaits\n",
			"cut_test.go:35:7: n: ",
			"\tlevel: proven",
		}, "1 finding"},
		// The second recording is cut in TestLongToo: the parallel test,
		// which waits for it, is reached by none, and that is said.
		{"TestLost", exitClean, []string{
			"avcheck test: recording again the 2 tests that the recording did not reach, up to 20000 probe events (20000 are left of the one more -max-events that the recordings again share): TestLongToo, TestWaits\n",
			"avcheck test: not recorded: the 1 test that no recording reached before its -max-events ran out: TestWaits (a larger -max-events, or -run, records them)\n",
			"avcheck test: 1 test of 1 package not recorded: the recordings' -max-events ran out before them (the packages' lines above name them)\n",
		}, "0 findings"},
	} {
		args := []string{"-replay=false", "-max-events", "20000", "-p", "1", "-skip", tc.skip}
		code, out, stderr := avcheckTest(t, args, "testdata/record/cutsuite")
		if code != tc.code {
			t.Fatalf("-skip %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.skip, code, tc.code, out, stderr)
		}
		for _, want := range append(tc.want, "the recording stopped at its limit of about 20000 probe events",
			"avcheck test: 1 package recorded, "+map[bool]string{true: "1 package", false: "0 packages"}[tc.code == exitFindings]+" with findings ("+tc.findings+")") {
			if !strings.Contains(out, want) {
				t.Errorf("-skip %q: the output does not hold %q:\n%s", tc.skip, want, out)
			}
		}
		if n := strings.Count(out, "recording again"); n != 1 {
			t.Errorf("-skip %q: %d rounds after the first, want 1:\n%s", tc.skip, n, out)
		}
		if got, want := strings.Contains(out, "not recorded: the"), tc.code == exitClean; got != want {
			t.Errorf("-skip %q: a line of tests not recorded: %v, want %v:\n%s", tc.skip, got, want, out)
		}
	}
}

// The recordings after the first take half of the events left each, so
// that one test that passes its share leaves the rest to the tests after
// it; the last round, and a half too small, take all.
func TestRoundLimit(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		round  int
		want   int64
	}{
		{3000000, 2, 1500000},
		{1500000, 3, 750000},
		{200000, 4, 100000},
		{199999, 4, 199999},
		{20000, 2, 20000},
		{3000000, maxRounds, 3000000},
	} {
		if got := roundLimit(tc.budget, tc.round); got != tc.want {
			t.Errorf("roundLimit(%d, %d) = %d, want %d", tc.budget, tc.round, got, tc.want)
		}
	}
}

// A package whose test binary fails (here a test panics) is recorded and
// predicted on all the same, has a FAIL line, and makes avcheck test
// exit 1, as go test does.
func TestTestFailing(t *testing.T) {
	t.Parallel()
	code, out, stderr := avcheckTest(t, nil, "testdata/record/crash")
	if code != exitError {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitError, out, stderr)
	}
	for _, want := range []string{
		"avcheck test: the program exited with status 2",
		"FAIL\tgithub.com/avcheck/avcheck/testdata/record/crash\t",
		"\t[tests failed; 1 finding]\n",
		"avcheck test: 1 package recorded, 1 package with findings (1 finding), 1 package whose tests failed, 0 packages not recorded\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not hold %q:\n%s", want, out)
		}
	}
}

// The hints of avcheck test name a package by its directory as the go
// command takes it.
func TestShortPath(t *testing.T) {
	for _, tc := range []struct{ dir, path, want string }{
		{"/m", "/m", "."},
		{"/m", "/m/pkg/x", "./pkg/x"},
		{"/m/a", "/m/b", "/m/b"},
		{"/m", "/other", "/other"},
	} {
		if got := shortPath(tc.dir, tc.path); got != tc.want {
			t.Errorf("shortPath(%q, %q) = %q, want %q", tc.dir, tc.path, got, tc.want)
		}
	}
}

// A finding that two recordings of one package report is one finding,
// with the instances and tests of both, at the higher of their levels;
// a finding only the later one reports is added.
func TestRoundMerge(t *testing.T) {
	finding := func(line int, level string, count int, dropped string, tests ...string) report.Finding {
		return report.Finding{Kind: "race", Pattern: "R-W", Level: level, Count: count, Dropped: dropped, Tests: tests,
			Accesses: []report.Access{{File: "c.go", Line: line, Col: 2, Op: "rd"}, {File: "c.go", Line: 20, Col: 2, Op: "wr"}}}
	}
	first := &roundResult{testResult: testResult{code: exitFindings, findings: 1, doc: &report.Document{Findings: []report.Finding{
		finding(10, "predicted", 37, "", "TestAccept"),
		finding(11, "predicted", 1, "infeasible", "TestAccept"),
	}}}}
	next := &roundResult{testResult: testResult{code: exitFindings, findings: 3, doc: &report.Document{Findings: []report.Finding{
		finding(10, "proven", 4, "", "TestReadDeadline", "TestAccept"),
		finding(11, "predicted", 2, "", "TestLargeWindow"),
		finding(12, "filtered", 9, "", "TestLargeWindow"),
	}}}}
	first.merge(next, false)
	want := []report.Finding{
		finding(10, "proven", 41, "", "TestAccept", "TestReadDeadline"),
		finding(11, "predicted", 3, "", "TestAccept", "TestLargeWindow"),
		finding(12, "filtered", 9, "", "TestLargeWindow"),
	}
	if !reflect.DeepEqual(first.doc.Findings, want) {
		t.Errorf("merged findings:\n%+v\nwant\n%+v", first.doc.Findings, want)
	}
	if first.findings != 3 {
		t.Errorf("merged count %d, want 3", first.findings)
	}
}
