//go:build unix

package plugin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/report"
)

// bankFindings are the findings of the static suite on
// testdata/example/bank (the README's example) as golangci-lint shows
// them: each finding's message after its analyzer's name, and each related
// position as an issue of its own, "(related information)".
var bankFindings = []string{
	"bank.go:30:21: guardedby(related information): a.mu held here",
	"bank.go:36:5: splitlock: a.balance is checked by a.Balance() in one critical section of a.mu and written in another; the check can be stale by the time of the write",
	"bank.go:39:2: splitlock(related information): a.balance written by a.Add(-amt) in a later critical section of a.mu",
	"bank.go:59:7: splitlock: a.balance is read and written in two critical sections of a.mu; the update can be lost",
	"bank.go:63:2: splitlock(related information): a.balance written in a later critical section of a.mu",
	"bank.go:69:13: guardedby: a.history is accessed without a.mu, which guards it (held at 4 of its 5 accesses)",
	"bank.go:81:5: atomicact: the atomic load of b.audited decides a later atomic Store of it; another goroutine can change it in between: use CompareAndSwap",
	"bank.go:82:3: atomicact(related information): atomic Store of b.audited here",
	"bank.go:88:25: atomicact(related information): atomic Add of b.open here",
	"bank.go:91:40: atomicact: b.open is read plainly here but accessed atomically elsewhere (atomic.Add at bank.go:88); the plain access races with the atomic ones",
}

// TestGolangciLint builds a custom golangci-lint with
// scripts/build-golangci-lint and checks what it reports on the README's
// example with the example configuration of docs/golangci.
func TestGolangciLint(t *testing.T) {
	if os.Getenv("AVCHECK_PLUGIN_TEST") == "" {
		t.Skip("builds a custom golangci-lint, which takes minutes; run it with AVCHECK_PLUGIN_TEST=1 go test -timeout 30m -run TestGolangciLint ./plugin")
	}
	// The build and the runs end before the test's deadline, so that a
	// timeout leaves no process behind.
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-time.Minute))
		defer cancel()
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "custom-gcl")
	build := command(ctx, "bash", filepath.Join(root, "scripts", "build-golangci-lint"), bin)
	if out, err := build.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			t.Fatalf("scripts/build-golangci-lint did not finish before the test's deadline; give go test a longer -timeout\n%s", out)
		}
		t.Fatalf("scripts/build-golangci-lint: %v\n%s", err, out)
	}
	version, err := command(ctx, bin, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	if !regexp.MustCompile(`^golangci-lint has version v2\.15\.0-custom-gcl-[A-Za-z0-9]+ built with go`).Match(version) {
		t.Errorf("%s version = %q, want v2.15.0-custom-gcl-<hash>", bin, version)
	}

	config, err := os.ReadFile(filepath.Join(root, "docs", "golangci", ".golangci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	bank := newModule(t, filepath.Join(root, "testdata", "example", "bank"), config)
	// One cache for the runs, none of the user's.
	cache := t.TempDir()
	run := func(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := command(ctx, bin, append([]string{"run", "--allow-parallel-runners"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOLANGCI_LINT_CACHE="+cache)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			t.Fatalf("golangci-lint run: %v", err)
		}
		if ctx.Err() != nil {
			t.Fatal("golangci-lint run did not finish before the test's deadline; give go test a longer -timeout")
		}
		return out.String(), errOut.String(), code
	}

	t.Run("text", func(t *testing.T) {
		// The second run replays golangci-lint's cache.
		for _, pass := range []string{"first run", "from the cache"} {
			stdout, stderr, code := run(t, bank, "./...")
			if code != 1 {
				t.Errorf("%s: exit code %d, want 1 (issues found); stderr:\n%s", pass, code, stderr)
			}
			checkText(t, stdout, bankFindings)
		}
	})

	t.Run("json", func(t *testing.T) {
		stdout, stderr, code := run(t, bank, "--output.json.path=stdout", "./...")
		if code != 1 {
			t.Errorf("exit code %d, want 1 (issues found); stderr:\n%s", code, stderr)
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		var report struct {
			Issues []struct {
				FromLinter, Text string
				Pos              struct {
					Filename     string
					Line, Column int
				}
			}
		}
		if err := dec.Decode(&report); err != nil {
			t.Fatalf("decoding the JSON output: %v\n%s", err, stdout)
		}
		var got []string
		for _, is := range report.Issues {
			if is.FromLinter != "avcheck" {
				t.Errorf("issue from %s: %s", is.FromLinter, is.Text)
				continue
			}
			got = append(got, fmt.Sprintf("%s:%d:%d: %s", is.Pos.Filename, is.Pos.Line, is.Pos.Column, is.Text))
		}
		compare(t, got, bankFindings)
		// After the JSON, the text summary.
		rest := stdout[dec.InputOffset():]
		if want := "\n10 issues:\n* avcheck: 10\n"; rest != want {
			t.Errorf("after the JSON: %q, want %q", rest, want)
		}
	})

	t.Run("no findings", func(t *testing.T) {
		fixed := newModule(t, filepath.Join(root, "testdata", "example", "fixed"), config)
		stdout, stderr, code := run(t, fixed, "./...")
		if code != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", code, stderr)
		}
		if stdout != "0 issues.\n" {
			t.Errorf("stdout = %q, want %q", stdout, "0 issues.\n")
		}
	})

	t.Run("settings", func(t *testing.T) {
		cfg := bytes.Replace(config, []byte("# disable: [guardedby]"), []byte("disable: [guardedby]"), 1)
		if bytes.Equal(cfg, config) {
			t.Fatal("docs/golangci/.golangci.yml has no commented-out disable: [guardedby]")
		}
		// In the module: golangci-lint shows paths relative to the
		// configuration's directory.
		path := filepath.Join(bank, "disable.golangci.yml")
		if err := os.WriteFile(path, cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := run(t, bank, "-c", path, "./...")
		if code != 1 {
			t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
		}
		checkText(t, stdout, slices.DeleteFunc(slices.Clone(bankFindings), func(f string) bool {
			return strings.Contains(f, ": guardedby")
		}))
	})

	// A report of avcheck run in the module's .avcheck/report.json is
	// shown, and a new report is read again rather than replayed from
	// golangci-lint's cache: the plugin puts the report's hash into the
	// settings golangci-lint keys its cache with.
	t.Run("dynamic report", func(t *testing.T) {
		mod := newModule(t, filepath.Join(root, "testdata", "example", "bank"), config)
		for _, msg := range []string{"a.balance: first report", "a.balance: second report"} {
			writeReport(t, mod, msg)
			stdout, stderr, code := run(t, mod, "./...")
			if code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			want := append(slices.Clone(bankFindings), "bank.go:59:7: avreport: "+msg+" (avcheck run: predicted)")
			checkText(t, stdout, want)
		}
	})

	t.Run("unknown setting", func(t *testing.T) {
		cfg := bytes.Replace(config, []byte("guardedby-threshold:"), []byte("threshold:"), 1)
		path := filepath.Join(t.TempDir(), "golangci.yml")
		if err := os.WriteFile(path, cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := run(t, bank, "-c", path, "./...")
		if code != 3 {
			t.Errorf("exit code %d, want 3 (golangci-lint's failure)", code)
		}
		if stdout != "" {
			t.Errorf("stdout = %q, want nothing", stdout)
		}
		want := `Error: build linters: plugin(avcheck): newPlugin avcheck: unknown setting "threshold" (known: enable, disable, maxd, guardedby-threshold, report)` + "\n"
		if !strings.HasPrefix(stderr, want) {
			t.Errorf("stderr:\n%s\nwant it to start with:\n%s", stderr, want)
		}
	})
}

// command returns a command that runs in a process group of its own,
// which is terminated when ctx is done: the build script's go commands and
// their compilers with it.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	return cmd
}

// newModule copies the Go files of dir into a module of their own, with
// config as its .golangci.yml, and returns its directory.
func newModule(t *testing.T, dir string, config []byte) string {
	t.Helper()
	mod := t.TempDir()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goMod := "module example.com/" + filepath.Base(dir) + "\n\ngo 1.26\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(goMod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, ".golangci.yml"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	return mod
}

// writeReport writes mod's .avcheck/report.json, as avcheck run would,
// with one finding at bank.go:59:7 whose message is msg.
func writeReport(t *testing.T, mod, msg string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(mod, "bank.go"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	doc := report.Document{
		Version: report.Version,
		Findings: []report.Finding{{
			Kind: "atomicity", Pattern: "R-W-W", Level: "predicted", Variable: "a.balance", Message: msg, Count: 1,
			Accesses: []report.Access{{File: "bank.go", Line: 59, Col: 7, Op: "read", Goroutine: 1, Role: "first", Seq: 1}},
			Witness:  []report.Step{},
		}},
		Files: []report.File{{File: "bank.go", SHA256: hex.EncodeToString(sum[:])}},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mod, ".avcheck"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, ".avcheck", "report.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// issueLine matches the first line of an issue in golangci-lint's text
// output; the source line and a caret follow it.
var issueLine = regexp.MustCompile(`^(\S+\.go:\d+:\d+: .*) \(([a-z0-9]+)\)$`)

// checkText checks golangci-lint's text output: exactly the want issues,
// all from avcheck, and the summary.
func checkText(t *testing.T, stdout string, want []string) {
	t.Helper()
	var got []string
	for line := range strings.Lines(stdout) {
		m := issueLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			continue
		}
		if m[2] != "avcheck" {
			t.Errorf("issue from %s: %s", m[2], m[1])
			continue
		}
		got = append(got, m[1])
	}
	compare(t, got, want)
	summary := fmt.Sprintf("%d issues:\n* avcheck: %d\n", len(want), len(want))
	if !strings.HasSuffix(stdout, summary) {
		t.Errorf("output does not end with the summary %q:\n%s", summary, stdout)
	}
}

func compare(t *testing.T, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if slices.Equal(got, want) {
		return
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("unexpected issue: %s", g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing issue: %s", w)
		}
	}
}
