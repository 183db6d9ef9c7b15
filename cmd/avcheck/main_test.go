package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// avcheck builds the command once per test binary run.
func avcheck(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "avcheck")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// run runs a command in the module root and returns its standard error
// with the module root's path removed, and its exit code.
func run(t *testing.T, name string, args ...string) (string, string, int) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	clean := strings.ReplaceAll(stderr.String(), root+string(os.PathSeparator), "")
	return stdout.String(), clean, code
}

// The findings on the bundled example, as avcheck prints them: each
// finding, then its related positions indented.
var bankFindings = []string{
	"testdata/example/bank/bank.go:36:5: a.balance is checked by a.Balance() in one critical section of a.mu and written in another; the check can be stale by the time of the write",
	"testdata/example/bank/bank.go:39:2: \ta.balance written by a.Add(-amt) in a later critical section of a.mu",
	"testdata/example/bank/bank.go:59:7: a.balance is read and written in two critical sections of a.mu; the update can be lost",
	"testdata/example/bank/bank.go:63:2: \ta.balance written in a later critical section of a.mu",
	"testdata/example/bank/bank.go:81:5: the atomic load of b.audited decides a later atomic Store of it; another goroutine can change it in between: use CompareAndSwap",
	"testdata/example/bank/bank.go:82:3: \tatomic Store of b.audited here",
	"testdata/example/bank/bank.go:91:40: b.open is read plainly here but accessed atomically elsewhere (atomic.Add at bank.go:88); the plain access races with the atomic ones",
	"testdata/example/bank/bank.go:88:25: \tatomic Add of b.open here",
	"testdata/example/bank/bank.go:69:13: a.history is accessed without a.mu, which guards it (held at 4 of its 5 accesses)",
	"testdata/example/bank/bank.go:30:21: \ta.mu held here",
}

// findings returns the finding lines of the output, sorted by finding
// with each finding's related lines kept after it.
func findings(out string) []string {
	var groups [][]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "testdata/") {
			continue
		}
		if _, msg, _ := strings.Cut(line, ": "); strings.HasPrefix(msg, "\t") && len(groups) > 0 {
			groups[len(groups)-1] = append(groups[len(groups)-1], line)
			continue
		}
		groups = append(groups, []string{line})
	}
	var lines []string
	for _, g := range sortGroups(groups) {
		lines = append(lines, g...)
	}
	return lines
}

func sortGroups(groups [][]string) [][]string {
	for i := 1; i < len(groups); i++ {
		for j := i; j > 0 && groups[j][0] < groups[j-1][0]; j-- {
			groups[j], groups[j-1] = groups[j-1], groups[j]
		}
	}
	return groups
}

func TestStandalone(t *testing.T) {
	bin := avcheck(t)
	_, stderr, code := run(t, bin, "./testdata/example/bank")
	if code != 3 {
		t.Errorf("exit code %d, want 3\n%s", code, stderr)
	}
	if got, want := strings.Join(findings(stderr), "\n"), strings.Join(findings(strings.Join(bankFindings, "\n")), "\n"); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}

	_, stderr, code = run(t, bin, "./testdata/example/fixed")
	if code != 0 || stderr != "" {
		t.Errorf("fixed example: exit %d, output:\n%s\nwant exit 0 and no output", code, stderr)
	}
}

func TestVetTool(t *testing.T) {
	bin := avcheck(t)
	_, stderr, code := run(t, "go", "vet", "-vettool="+bin, "./testdata/example/bank", "./testdata/example/fixed")
	if code != 1 {
		t.Errorf("go vet exit code %d, want 1\n%s", code, stderr)
	}
	if got, want := strings.Join(findings(stderr), "\n"), strings.Join(findings(strings.Join(bankFindings, "\n")), "\n"); got != want {
		t.Errorf("findings:\n%s\nwant:\n%s", got, want)
	}
}

func TestBadInput(t *testing.T) {
	bin := avcheck(t)
	for _, tc := range []struct {
		args []string
		code int
		want string // the first line of standard error
	}{
		{[]string{"./testdata/broken"}, 1, `testdata/broken/broken.go:3:23: cannot use "x" (untyped string constant) as int value in return statement`},
		{[]string{"./testdata/nosuchdir"}, 1, "avcheck: stat testdata/nosuchdir: directory not found"},
		{[]string{"-nosuchflag", "./testdata/example/fixed"}, 2, "avcheck: flag provided but not defined: -nosuchflag"},
	} {
		_, stderr, code := run(t, bin, tc.args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != tc.code || first != tc.want {
			t.Errorf("avcheck %s: exit %d, first line %q; want exit %d, %q\n%s", strings.Join(tc.args, " "), code, first, tc.code, tc.want, stderr)
		}
		if tc.code == 1 && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("avcheck %s: want one error line, got:\n%s", strings.Join(tc.args, " "), stderr)
		}
	}
}

func TestHelp(t *testing.T) {
	bin := avcheck(t)
	stdout, _, code := run(t, bin, "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, want := range []string{"avcheck predict", "avcheck run", "splitlock", "atomicact", "guardedby", "regions", "annotation"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help does not mention %q:\n%s", want, stdout)
		}
	}
}

// go vet runs the tool on every dependency of the packages it is given,
// for their facts only: the diagnostics printed are those of the packages
// named. runtime/trace and internal/bisect, which it imports, have
// findings of their own, and none of them is printed when go vet is run
// on a package that imports them.
//
// (go vet's cache keys a package's run the same whether it is for facts
// only or not, and replays the output of whichever ran first: after
// "go vet -vettool=... runtime/trace" with an avcheck binary of the same
// content, this go vet would replay that run's findings, as the README's
// known limitations say. No test vets these packages by name.)
func TestVetOnlyNamedPackages(t *testing.T) {
	bin := avcheck(t)
	_, stderr, code := run(t, bin, "runtime/trace", "internal/bisect")
	if code != 3 || !strings.Contains(stderr, "internal/bisect/bisect.go:") || !strings.Contains(stderr, "runtime/trace/") {
		t.Fatalf("avcheck runtime/trace internal/bisect: exit %d, want findings in both (3):\n%s", code, stderr)
	}
	mod := t.TempDir()
	for name, content := range map[string]string{
		"go.mod": "module example.com/usetrace\n\ngo 1.26\n",
		"use.go": "package usetrace\n\nimport \"runtime/trace\"\n\n// On reports whether tracing is on.\nfunc On() bool { return trace.IsEnabled() }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "vet", "-vettool="+bin, ".")
	cmd.Dir = mod
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("go vet on a package importing runtime/trace: %v, output:\n%s\nwant exit 0 and no output", err, out)
	}
}

// avcheck -V prints the version; -V=full, which go vet runs to key its
// cache, adds the SHA-256 of the binary, in the form go vet parses (go
// vet itself runs it in TestVetTool), and so changes with the binary.
func TestVersion(t *testing.T) {
	bin := avcheck(t)
	stdout, stderr, code := run(t, bin, "-V")
	if code != 0 || stderr != "" || !regexp.MustCompile(`^avcheck version (devel(\+[0-9a-f]{12}(\+dirty)?)?|v\S+)\n$`).MatchString(stdout) {
		t.Errorf("avcheck -V: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	ver := strings.TrimSpace(stdout)

	full := func(bin string) string {
		t.Helper()
		stdout, stderr, code := run(t, bin, "-V=full")
		if code != 0 || stderr != "" {
			t.Fatalf("%s -V=full: exit %d, stderr %q", bin, code, stderr)
		}
		return stdout
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := full(bin), fmt.Sprintf("%s buildID=%x\n", ver, sha256.Sum256(data)); got != want {
		t.Errorf("avcheck -V=full = %q, want %q", got, want)
	}
	// Another binary: the same one with a byte more at the end.
	other := filepath.Join(t.TempDir(), "avcheck")
	if err := os.WriteFile(other, append(data, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if a, b := full(bin), full(other); a == b {
		t.Errorf("two binaries, one -V=full: %q", a)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-V=short"}, "avcheck: -V=short: want -V or -V=full\nusage: avcheck -V[=full]\n"},
		{[]string{"-V", "./..."}, "avcheck: -V takes no other arguments\nusage: avcheck -V[=full]\n"},
	} {
		stdout, stderr, code := run(t, bin, tc.args...)
		if code != 2 || stdout != "" || stderr != tc.want {
			t.Errorf("avcheck %s: exit %d, stdout %q, stderr %q; want exit 2 and stderr %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}
}

// The README's table of the static suite's flags says which work through
// go vet: those go vet accepts, the ones avcheck -flags lists. go vet
// rejects the others.
func TestREADMEFlagsThroughVet(t *testing.T) {
	bin := avcheck(t)
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(data), "\n## Running the static suite\n")
	_, table, ok := strings.Cut(section, "| flag | default | meaning | through go vet |\n|---|---|---|---|\n")
	if !ok {
		t.Fatal("README.md: no table of flags with a column \"through go vet\" under \"Running the static suite\"")
	}
	stdout, stderr, code := run(t, bin, "-flags")
	if code != 0 {
		t.Fatalf("avcheck -flags: exit %d\n%s", code, stderr)
	}
	var listed []struct{ Name string }
	if err := json.Unmarshal([]byte(stdout), &listed); err != nil {
		t.Fatalf("avcheck -flags: %v\n%s", err, stdout)
	}
	known := map[string]bool{}
	for _, f := range listed {
		known[f.Name] = true
	}
	rows := 0
	flagName := regexp.MustCompile("`-([a-z.]+)`")
	for row := range strings.SplitSeq(table, "\n") {
		if !strings.HasPrefix(row, "|") {
			break
		}
		cells := strings.Split(strings.Trim(row, "|"), "|")
		vet := strings.TrimSpace(cells[len(cells)-1])
		for _, m := range flagName.FindAllStringSubmatch(cells[0], -1) {
			rows++
			if want := strings.HasPrefix(vet, "yes"); known[m[1]] != want {
				t.Errorf("README.md says -%s through go vet: %q, but avcheck -flags lists it: %v", m[1], vet, known[m[1]])
			}
		}
	}
	if rows < 6 {
		t.Errorf("README.md's table names %d flags:\n%s", rows, table)
	}
	_, stderr, code = run(t, "go", "vet", "-vettool="+bin, "-sarif", "./testdata/example/fixed")
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || first != "flag provided but not defined: -sarif" {
		t.Errorf("go vet -sarif: exit %d, stderr:\n%s\nwant exit 2 and the error README.md quotes", code, stderr)
	}
}

// The standalone suite names files as go vet does: relative to the
// current directory where that is shorter, "../" included.
func TestPathsAsGoVet(t *testing.T) {
	bin := avcheck(t)
	lines := func(name string, args ...string) []string {
		t.Helper()
		cmd := exec.Command(name, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run()
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if !strings.HasPrefix(l, "# ") {
				out = append(out, l)
			}
		}
		slices.Sort(out)
		return out
	}
	// From this package's directory, two levels below the files.
	own := lines(bin, "../../testdata/example/bank")
	vet := lines("go", "vet", "-vettool="+bin, "../../testdata/example/bank")
	if len(own) != len(bankFindings) || !slices.Equal(own, vet) {
		t.Errorf("avcheck:\n%s\ngo vet:\n%s", strings.Join(own, "\n"), strings.Join(vet, "\n"))
	}
	// From the module root: relative, whatever its path.
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "./testdata/example/bank")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(l, "testdata/example/bank/bank.go:") {
			t.Errorf("from the module root: %q, want a path relative to it", l)
		}
	}
}
