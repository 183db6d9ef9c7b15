package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/avcheck/avcheck/analyzers/avreport"
	"github.com/avcheck/avcheck/dynamic/report"
)

const reportHashUsage = "usage: avcheck report-hash [FILE] (avcheck report-hash -h for help)"

const reportHashHelp = `usage: avcheck report-hash [FILE]

Print the SHA-256 of the report that avcheck run wrote (FILE, by default
.avcheck/report.json at the root of the current directory's module), the
value go vet needs to see a new report rather than replay a cached result:

  go vet -vettool=$(which avcheck) -avreport.hash=$(avcheck report-hash) ./...

It is the same as sha256sum (shasum -a 256 on macOS), on every system.
See docs/avreport.md.

Exit status: 0 printed, 1 the report could not be read, 2 bad usage.
`

// runReportHash is "avcheck report-hash".
func runReportHash(args []string) int {
	return reportHashMain(args, os.Stdout, os.Stderr)
}

func reportHashMain(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("avcheck report-hash", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, reportHashHelp)
			return exitClean
		}
		fmt.Fprintf(stderr, "avcheck report-hash: %v\n", err)
		fmt.Fprintln(stderr, reportHashUsage)
		return exitUsage
	}
	var path string
	switch flags.NArg() {
	case 0:
		root := avreport.ModuleRoot(workDir())
		if root == "" {
			fmt.Fprintln(stderr, "avcheck report-hash: the current directory is in no module: name the report")
			return exitError
		}
		path = filepath.Join(root, avreport.DefaultReport)
	case 1:
		path = flags.Arg(0)
	default:
		fmt.Fprintln(stderr, "avcheck report-hash: one report at a time")
		fmt.Fprintln(stderr, reportHashUsage)
		return exitUsage
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "avcheck report-hash: %s: no report there: run avcheck run first\n", path)
		return exitError
	}
	if err != nil {
		fmt.Fprintf(stderr, "avcheck report-hash: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, report.Hash(data))
	return exitClean
}

// vetCommand is the go vet command that shows the findings of the report
// with the given hash as diagnostics of the package patterns pkgs.
// A report written elsewhere than the default (avcheck run -report) is
// named by -avreport.report, as an absolute path: go vet runs the tool in
// each package's directory.
func vetCommand(reportPath, hash string, pkgs ...string) string {
	flags := ""
	if reportPath != "" {
		if abs, err := filepath.Abs(reportPath); err == nil {
			reportPath = abs
		}
		flags = " -avreport.report=" + shellQuote(reportPath)
	}
	quoted := make([]string, len(pkgs))
	for i, p := range pkgs {
		quoted[i] = shellQuote(p)
	}
	return fmt.Sprintf("go vet -vettool=%s%s -avreport.hash=%s %s", vetTool(), flags, hash, strings.Join(quoted, " "))
}

// vetTool is how the command names this avcheck: $(which avcheck) when
// that is the program running, or when the program running is go run's
// temporary build, which is gone by the time the user runs the command;
// else its path.
func vetTool() string {
	self, err := os.Executable()
	if err != nil || goRunBuild(self) {
		return "$(which avcheck)"
	}
	if onPath, err := exec.LookPath("avcheck"); err == nil && sameFile(self, onPath) {
		return "$(which avcheck)"
	}
	return shellQuote(self)
}

// goRunBuild reports whether path is a binary that go run built in its
// temporary work directory ($TMPDIR/go-buildNNN/bNNN/exe/avcheck).
func goRunBuild(path string) bool {
	dir, exe := filepath.Split(path)
	return exe != "" && filepath.Base(dir) == "exe" && strings.Contains(dir, string(filepath.Separator)+"go-build")
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
