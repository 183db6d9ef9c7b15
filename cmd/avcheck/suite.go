package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/internal/suite"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/multichecker"
)

// analyzers is the static suite, in the order help lists them.
func analyzers() []*analysis.Analyzer { return suite.Analyzers() }

// childEnv marks the process that runs the suite for a standalone
// avcheck, which filters what it prints.
const childEnv = "AVCHECK_SUITE_CHILD"

// runSuite runs the static suite and does not return. As go vet's
// -vettool (the unitchecker .cfg protocol, -flags; -V=full is
// versionMain's) the checker
// runs in this process. Standalone, it runs in a child whose standard
// error is filtered: when a package does not build, the compiler's errors
// are shown as they are, without one line per analyzer saying that it
// was skipped.
func runSuite() {
	if os.Getenv(childEnv) != "" {
		// Only for -h's list: the parent turns -sarif into -json and
		// converts the JSON (vetjson.go). go vet does not learn of it.
		flag.Bool("sarif", false, "emit SARIF 2.1.0 output (standalone avcheck only; docs/predict.md)")
	}
	if os.Getenv(childEnv) != "" || vetProtocol(os.Args[1:]) {
		multichecker.Main(analyzers()...)
	}
	if code, done := checkSuiteArgs(os.Args[1:], os.Stderr); done {
		os.Exit(code)
	}
	os.Exit(runFiltered(os.Args[1:]))
}

// suiteUsage is the standalone suite's usage line.
const suiteUsage = "usage: avcheck [-json|-sarif] [-flag...] package... (avcheck help for the subcommands and analyzers, avcheck -h for every flag)"

// checkSuiteArgs handles the arguments that are mistakes before any
// package is loaded: none at all, and "help" with a name that is neither
// an analyzer nor a subcommand. "help SUBCOMMAND" prints the
// subcommand's help. It reports whether it handled the arguments.
func checkSuiteArgs(args []string, stderr io.Writer) (int, bool) {
	if len(args) == 0 {
		fmt.Fprintln(stderr, suiteUsage)
		return exitUsage, true
	}
	if args[0] != "help" || len(args) < 2 {
		return 0, false
	}
	known := map[string]bool{}
	for _, a := range analyzers() {
		known[a.Name] = true
	}
	if sub, ok := subcommands[args[1]]; ok && len(args) == 2 {
		return sub.run([]string{"-h"}), true
	}
	for _, name := range args[1:] {
		if !known[name] {
			fmt.Fprintf(stderr, "avcheck help: %q is neither an analyzer nor a subcommand (avcheck help lists them)\n", name)
			fmt.Fprintln(stderr, "usage: avcheck help [analyzer...|subcommand]")
			return exitUsage, true
		}
	}
	return 0, false
}

// vetProtocol reports whether go vet is the caller.
func vetProtocol(args []string) bool {
	for _, a := range args {
		if a == "-flags" || strings.HasSuffix(a, ".cfg") {
			return true
		}
	}
	return false
}

// cascade matches the lines in which the driver says an analyzer did not
// run because its package or a prerequisite failed.
var cascade = regexp.MustCompile(`^[a-z]+: (analysis skipped due to errors in package|failed prerequisites: .*)$`)

// flagError matches the flag package's messages for a bad flag, which
// the multichecker follows with every flag's usage.
var flagError = regexp.MustCompile(`^(flag provided but not defined: |invalid value |invalid boolean value |flag needs an argument: |bad flag syntax: )`)

// notStd matches the loader's error for a pattern that is a single word
// naming no standard package: most often a mistyped subcommand.
var notStd = regexp.MustCompile(`^-: package (\S+) is not in std`)

func runFiltered(args []string) int {
	mode, childArgs, err := outputMode(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		fmt.Fprintln(os.Stderr, suiteUsage)
		return exitUsage
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return exitError
	}
	cmd := exec.Command(self, childArgs...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin, cmd.Stdout = os.Stdin, os.Stdout
	// With -json or -sarif, the child's JSON tree is read whole and
	// rewritten (vetjson.go).
	var tree bytes.Buffer
	if mode != outputText {
		cmd.Stdout = &tree
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return exitError
	}
	// An interrupt reaches the child from the terminal; the parent waits
	// for it to finish rather than leave it behind.
	signal.Ignore(os.Interrupt)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return exitError
	}
	usage := false
	wd := workDir()
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if usage {
			continue // the flag dump that follows a bad flag
		}
		if first && flagError.MatchString(line) {
			// One line saying what is wrong and the usage line, not
			// the multichecker's every flag.
			fmt.Fprintf(os.Stderr, "avcheck: %s\n", line)
			fmt.Fprintln(os.Stderr, suiteUsage)
			usage = true
			continue
		}
		if cascade.MatchString(line) {
			continue
		}
		if m := notStd.FindStringSubmatch(line); m != nil && len(childArgs) > 0 && m[1] == firstPattern(childArgs) && !strings.ContainsAny(m[1], "./") {
			fmt.Fprintf(os.Stderr, "avcheck: %q is neither a subcommand (%s) nor a package\n", m[1], subcommandNames())
			fmt.Fprintln(os.Stderr, suiteUsage)
			usage = true
			continue
		}
		// A pattern that names no package is reported at "-".
		if rest, ok := strings.CutPrefix(line, "-: "); ok {
			line = "avcheck: " + rest
		}
		fmt.Fprintln(os.Stderr, shortPosition(line, wd))
	}
	err = cmd.Wait()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() < 0:
		// Killed by a signal: most often the kernel, out of memory.
		// Standalone, every package's analysis stays in memory
		// until the end; go vet runs one package per process.
		fmt.Fprintf(os.Stderr, "avcheck: the analysis was stopped (%v); if memory ran out, analyse fewer packages at once or use go vet -vettool=$(which avcheck)\n", exit.ProcessState)
		return exitError
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return exitError
	}
	if usage {
		return exitUsage
	}
	if mode != outputText {
		c, err := writeVetOutput(os.Stdout, mode, tree.Bytes(), code)
		if err != nil {
			fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		}
		return c
	}
	return code
}

// filePosition matches the position that starts a diagnostic or a
// compiler's error: "FILE.go:LINE".
var filePosition = regexp.MustCompile(`^(.+?\.go):\d`)

// shortPosition shows the file name that starts line as go vet does:
// relative to dir, the current directory, where that is shorter. The
// driver prints absolute names.
func shortPosition(line, dir string) string {
	m := filePosition.FindStringSubmatch(line)
	if m == nil || !filepath.IsAbs(m[1]) {
		return line
	}
	return report.ShortPath(dir, m[1]) + line[len(m[1]):]
}

// firstPattern returns the first argument after the flags and their
// values.
func firstPattern(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
		if name := strings.TrimLeft(a, "-"); !strings.Contains(name, "=") && takesValue(name) {
			i++
		}
	}
	return ""
}

// subcommandNames lists the subcommands for a message: "predict, report-hash, run or help".
func subcommandNames() string {
	names := make([]string, 0, len(subcommands))
	for name := range subcommands {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ") + " or help"
}

func printAnalyzers() {
	fmt.Println("Analyzers (run 'avcheck help NAME' for one's documentation):")
	for _, a := range analyzers() {
		title, _, _ := strings.Cut(a.Doc, "\n")
		fmt.Printf("  %-12s%s\n", a.Name, title)
	}
}
