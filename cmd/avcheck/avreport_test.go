package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/internal/children"
)

// buildAvcheck builds the avcheck command into dir and returns its path.
func buildAvcheck(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "avcheck")
	// Tests that run in parallel record in this process under Delve,
	// which waits for any child: the go command runs as their recordings
	// allow, or its exit could be taken from under it.
	release := children.Spawn()
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	release()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// tempModule copies the packages of testdata/record (by name) into a new
// module in a temporary directory, so that avcheck run writes its
// .avcheck/report.json there and not in this repository.
func tempModule(t *testing.T, pkgs ...string) string {
	t.Helper()
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/avrun\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		src := filepath.Join("..", "..", "testdata", "record", p)
		entries, err := os.ReadDir(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(mod, p), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(mod, p, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return mod
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

// command runs name with args in dir.
func command(t *testing.T, dir, name string, args ...string) cmdResult {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return cmdResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// diagnostics returns the lines of go vet's output other than package
// headers.
func diagnostics(out string) []string {
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "# ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// From avcheck run to go vet: the run (which replays the witness of its
// lost update by default: level replayed) writes the report and prints
// the go vet command, with the report's hash, that shows its findings as
// diagnostics; they are shown next to the static suite's, at the same
// positions as the run's report, until the source changes.
func TestRunThenVet(t *testing.T) {
	bin := buildAvcheck(t, t.TempDir())
	mod := tempModule(t, "counter")

	run := command(t, mod, bin, "run", "./counter")
	if strings.Contains(run.stderr, "does not permit ptrace") {
		t.Skip("ptrace is not permitted here: " + strings.TrimSpace(run.stderr))
	}
	if run.code != exitFindings {
		t.Fatalf("avcheck run: exit %d, want %d\n%s", run.code, exitFindings, run.stderr)
	}
	path := filepath.Join(mod, ".avcheck", "report.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hash := report.Hash(data)
	lines := strings.Split(strings.TrimSpace(run.stderr), "\n")
	wantCmd := fmt.Sprintf("go vet -vettool=%s -avreport.hash=%s ./counter", bin, hash)
	if last := lines[len(lines)-1]; last != "avcheck run: to see the findings as diagnostics: "+wantCmd {
		t.Fatalf("avcheck run's last line:\n%s\nwant the command\n%s", last, wantCmd)
	}
	if got := command(t, mod, bin, "report-hash"); got.code != exitClean || got.stdout != hash+"\n" {
		t.Errorf("avcheck report-hash: exit %d, %q; want %q", got.code, got.stdout, hash+"\n")
	}

	// The report, as avcheck run's tests expect it, with the table of
	// source files.
	var doc report.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if got := summaries(doc); len(got) != 1 || got[0] != "replayed R-W-W c.n counter.go:16:rd counter.go:19:wr counter.go:19:wr" {
		t.Fatalf("report findings %q", got)
	}
	src := filepath.Join(mod, "counter", "counter.go")
	if len(doc.Files) != 1 || doc.Files[0].File != src || doc.Files[0].SHA256 == "" {
		t.Fatalf("report files %+v, want %s with its hash", doc.Files, src)
	}
	f := doc.Findings[0]
	a := f.Accesses
	splitlock := []string{
		"counter/counter.go:16:7: c.n is read and written in two critical sections of c.mu; the update can be lost",
		"counter/counter.go:19:2: \tc.n written in a later critical section of c.mu",
	}
	level := "replayed"
	if f.Count > 1 {
		level += fmt.Sprintf(", %d instances", f.Count)
	}
	want := append([]string{
		fmt.Sprintf("counter/counter.go:16:7: %s (avcheck run: %s)", f.Message, level),
		fmt.Sprintf("counter/counter.go:19:2: \tg%d writes c.n (interleaved)", a[1].Goroutine),
		fmt.Sprintf("counter/counter.go:19:2: \tg%d writes c.n (last)", a[2].Goroutine),
	}, splitlock...)

	// The printed command, as a user would paste it.
	vet := command(t, mod, "sh", "-c", wantCmd)
	if got := diagnostics(vet.stderr); vet.code != 1 || !sameLines(got, want) {
		t.Errorf("%s: exit %d\n%s\nwant exit 1 and\n%s", wantCmd, vet.code, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A hash that is not the report's: one diagnostic naming the report,
	// at the package clause, and the rest of the suite's findings.
	vet = command(t, mod, "go", "vet", "-vettool="+bin, "-avreport.hash=0123", "./counter")
	wantErr := fmt.Sprintf("counter/counter.go:3:1: avcheck run's report: %s: its sha256 is %s, not -avreport.hash=0123 (a newer report than the hash, or a mistyped hash): pass -avreport.hash=%s, which avcheck report-hash prints", path, hash, hash)
	if got := diagnostics(vet.stderr); vet.code != 1 || !sameLines(got, append([]string{wantErr}, splitlock...)) {
		t.Errorf("wrong hash: exit %d\n%s\nwant exit 1 and\n%s", vet.code, strings.Join(got, "\n"), wantErr)
	}

	// Once counter.go changes, its finding is no longer shown, though its
	// lines did not move.
	if err := os.WriteFile(src, append(mustRead(t, src), "\n// Edited after the run.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	vet = command(t, mod, "sh", "-c", wantCmd)
	if got := diagnostics(vet.stderr); vet.code != 1 || !sameLines(got, splitlock) {
		t.Errorf("after an edit: exit %d\n%s\nwant exit 1 and only\n%s", vet.code, strings.Join(got, "\n"), strings.Join(splitlock, "\n"))
	}
}

// sameLines reports whether got holds the lines of want, in any order:
// go vet prints the analyzers' diagnostics in an order of its own.
func sameLines(got, want []string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// avcheck report-hash: the report's SHA-256, or one line saying why not.
func TestReportHash(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{path}, exitClean, "ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356\n", ""},
		{[]string{filepath.Join(dir, "none.json")}, exitError, "", "avcheck report-hash: " + filepath.Join(dir, "none.json") + ": no report there: run avcheck run first\n"},
		{[]string{path, path}, exitUsage, "", "avcheck report-hash: one report at a time\n" + reportHashUsage + "\n"},
		{[]string{"-x"}, exitUsage, "", "avcheck report-hash: flag provided but not defined: -x\n" + reportHashUsage + "\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := reportHashMain(c.args, &stdout, &stderr)
		if code != c.code || stdout.String() != c.stdout || stderr.String() != c.errs {
			t.Errorf("avcheck report-hash %v: exit %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, stdout.String(), stderr.String(), c.code, c.stdout, c.errs)
		}
	}
}

// The printed command survives a shell: odd package paths are quoted.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"./pkg":      "./pkg",
		"./my pkg":   "'./my pkg'",
		"./it's":     `'./it'\''s'`,
		"":           "''",
		"/a/b-c_d.e": "/a/b-c_d.e",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
