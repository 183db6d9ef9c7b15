package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/avcheck/avcheck/dynamic/report"
)

// validSARIF checks out against the OASIS SARIF 2.1.0 schema kept in
// dynamic/report/testdata, and decodes it.
func validSARIF(t *testing.T, out string) report.SARIFLog {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "..", "dynamic", "report", "testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(report.SARIFSchemaURI, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(report.SARIFSchemaURI)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, out)
	}
	var log report.SARIFLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	return log
}

func TestPredictSARIF(t *testing.T) {
	// The trace names c.go relative to the current directory, which is
	// cmd/avcheck in the checkout; SARIF names it from the checkout's top.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(sourceRoot(wd), filepath.Join(wd, "c.go"))
	if err != nil {
		t.Fatal(err)
	}
	wantURI := filepath.ToSlash(rel)

	p := writeTemp(t, "trace.txt", serialCounter)
	code, out, errOut := runPredictTest("-sarif", p)
	if code != exitFindings || errOut != "" {
		t.Fatalf("exit %d, stderr %q; want %d and nothing", code, errOut, exitFindings)
	}
	log := validSARIF(t, out)
	res := log.Runs[0].Results
	if len(res) != 1 {
		t.Fatalf("want 1 result, got %d:\n%s", len(res), out)
	}
	r := res[0]
	loc := r.Locations[0].PhysicalLocation
	if r.RuleID != "atomicity/R-W-W" || r.Level != "warning" || loc.ArtifactLocation.URI != wantURI ||
		loc.ArtifactLocation.URIBaseID != report.SrcRoot || loc.Region.StartLine != 3 || loc.Region.StartColumn != 2 {
		t.Errorf("result %s at %+v %+v; want atomicity/R-W-W at %s:3:2 from %%SRCROOT%%", r.RuleID, loc.ArtifactLocation, loc.Region, wantURI)
	}
	if len(r.RelatedLocations) != 2 || len(r.CodeFlows) != 1 {
		t.Errorf("want 2 related locations and a code flow, got %d and %d", len(r.RelatedLocations), len(r.CodeFlows))
	}
	if v := log.Runs[0].Tool.Driver.Version; v == "" {
		t.Errorf("tool.driver.version is empty")
	}

	// A run with no finding is a valid log with no results, exit 0.
	p = writeTemp(t, "trace.txt", noRace)
	code, out, errOut = runPredictTest("-sarif", p)
	if code != exitClean || errOut != "" {
		t.Fatalf("exit %d, stderr %q; want %d and nothing", code, errOut, exitClean)
	}
	if log := validSARIF(t, out); len(log.Runs[0].Results) != 0 {
		t.Errorf("want no results, got:\n%s", out)
	}

	// Observed mode has no witness: no code flow.
	p = writeTemp(t, "trace.txt", interleavedCounter)
	code, out, _ = runPredictTest("-sarif", "-mode=observed", p)
	if code != exitFindings {
		t.Fatalf("observed: exit %d, want %d", code, exitFindings)
	}
	log = validSARIF(t, out)
	if res := log.Runs[0].Results; len(res) != 1 || res[0].RuleID != "unserializable/cycle" || len(res[0].CodeFlows) != 0 {
		t.Errorf("observed: want one unserializable/cycle result without a code flow, got:\n%s", out)
	}
}

// interleavedCounter is serialCounter as it would be recorded if g2's
// write had run between g1's critical sections.
const interleavedCounter = `avtrace 1
g1 fork g2
g1 begin region=1.1
g1 acq mu region=1.1
g1 rd c.n @c.go:3:2 region=1.1
g1 rel mu region=1.1
g2 acq mu
g2 wr c.n @c.go:9:2
g2 rel mu
g1 acq mu region=1.1
g1 wr c.n @c.go:4:2 region=1.1
g1 rel mu region=1.1
g1 finish region=1.1
`

// avcheck run -sarif on the split counter: the recorded trace names
// files by absolute path; SARIF names them from the checkout's top.
func TestRunSARIF(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(sourceRoot(root), filepath.Join(root, "testdata", "record", "counter", "counter.go"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), []string{"-sarif", "-report", filepath.Join(t.TempDir(), "report.json"), filepath.Join(root, "testdata", "record", "counter")}, &stdout, &stderr)
	if strings.Contains(stderr.String(), "does not permit ptrace") {
		t.Skip("ptrace is not permitted here: " + strings.TrimSpace(stderr.String()))
	}
	if code != exitFindings {
		t.Fatalf("exit %d, want %d\n%s", code, exitFindings, stderr.String())
	}
	log := validSARIF(t, stdout.String())
	var got []string
	for _, r := range log.Runs[0].Results {
		s := r.RuleID
		for _, l := range append(r.Locations[:1:1], r.RelatedLocations...) {
			s += fmt.Sprintf(" %s/%s:%d", l.PhysicalLocation.ArtifactLocation.URIBaseID, l.PhysicalLocation.ArtifactLocation.URI, l.PhysicalLocation.Region.StartLine)
		}
		got = append(got, s)
	}
	u := "%SRCROOT%/" + filepath.ToSlash(rel)
	want := fmt.Sprintf("atomicity/R-W-W %s:16 %s:19 %s:19", u, u, u)
	if strings.Join(got, "\n") != want {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// The standalone suite's -sarif: the static findings on the bundled
// example as SARIF, one rule per analyzer and category, paths from the
// checkout's top; a package that does not build is an unsuccessful
// invocation and exit 1.
func TestSuiteSARIF(t *testing.T) {
	bin := buildAvcheck(t, t.TempDir())
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(sourceRoot(root), filepath.Join(root, "testdata", "example", "bank", "bank.go"))
	if err != nil {
		t.Fatal(err)
	}
	uri := filepath.ToSlash(rel)
	sarifOf := func(pkg string) (report.SARIFLog, int, string) {
		cmd := exec.Command(bin, "-sarif", pkg)
		cmd.Dir = root
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatal(err)
			}
			code = exit.ExitCode()
		}
		return validSARIF(t, stdout.String()), code, stderr.String()
	}

	log, code, stderr := sarifOf("./testdata/example/bank")
	if code != exitFindings {
		t.Errorf("bank: exit %d, want %d\n%s", code, exitFindings, stderr)
	}
	var got []string
	for _, r := range log.Runs[0].Results {
		l := r.Locations[0].PhysicalLocation
		if l.ArtifactLocation.URI != uri || l.ArtifactLocation.URIBaseID != report.SrcRoot {
			t.Errorf("%s: file %+v, want %s from %%SRCROOT%%", r.RuleID, l.ArtifactLocation, uri)
		}
		got = append(got, fmt.Sprintf("%s %d:%d related %d", r.RuleID, l.Region.StartLine, l.Region.StartColumn, len(r.RelatedLocations)))
	}
	want := []string{
		"atomicact/atomic-check-then-act 81:5 related 1",
		"atomicact/mixed-atomic-access 91:40 related 1",
		"guardedby/unguarded-access 69:13 related 1",
		"splitlock/split-critical-section 36:5 related 1",
		"splitlock/split-critical-section 59:7 related 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(log.Runs[0].Tool.Driver.Rules); n != 4 {
		t.Errorf("%d rules, want 4", n)
	}

	log, code, _ = sarifOf("./testdata/example/fixed")
	if code != exitClean || len(log.Runs[0].Results) != 0 {
		t.Errorf("fixed: exit %d, %d results; want 0 and none", code, len(log.Runs[0].Results))
	}

	log, code, stderr = sarifOf("./testdata/broken")
	inv := log.Runs[0].Invocations
	if code != exitError || len(inv) != 1 || inv[0].ExecutionSuccessful {
		t.Errorf("broken: exit %d, invocations %+v; want 1 and an unsuccessful invocation", code, inv)
	}
	if !strings.Contains(stderr, `broken.go:3:23: cannot use "x"`) {
		t.Errorf("broken: the compiler's error is not on standard error:\n%s", stderr)
	}
}
