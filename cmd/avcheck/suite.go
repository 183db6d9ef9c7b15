package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"

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
// -vettool (the unitchecker .cfg protocol, -V=full, -flags) the checker
// runs in this process. Standalone, it runs in a child whose standard
// error is filtered: when a package does not build, the compiler's errors
// are shown as they are, without one line per analyzer saying that it
// was skipped.
func runSuite() {
	if os.Getenv(childEnv) != "" || vetProtocol(os.Args[1:]) {
		multichecker.Main(analyzers()...)
	}
	os.Exit(runFiltered(os.Args[1:]))
}

// vetProtocol reports whether go vet is the caller.
func vetProtocol(args []string) bool {
	for _, a := range args {
		if a == "-V=full" || a == "-flags" || strings.HasSuffix(a, ".cfg") {
			return true
		}
	}
	return false
}

// cascade matches the lines in which the driver says an analyzer did not
// run because its package or a prerequisite failed.
var cascade = regexp.MustCompile(`^[a-z]+: (analysis skipped due to errors in package|failed prerequisites: .*)$`)

func runFiltered(args []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return 1
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin, cmd.Stdout = os.Stdin, os.Stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return 1
	}
	// An interrupt reaches the child from the terminal; the parent waits
	// for it to finish rather than leave it behind.
	signal.Ignore(os.Interrupt)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return 1
	}
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if cascade.MatchString(line) {
			continue
		}
		// A pattern that names no package is reported at "-".
		if rest, ok := strings.CutPrefix(line, "-: "); ok {
			line = "avcheck: " + rest
		}
		fmt.Fprintln(os.Stderr, line)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() < 0 {
			// Killed by a signal: most often the kernel, out of memory.
			// Standalone, every package's analysis stays in memory
			// until the end; go vet runs one package per process.
			fmt.Fprintf(os.Stderr, "avcheck: the analysis was stopped (%v); if memory ran out, analyse fewer packages at once or use go vet -vettool=$(which avcheck)\n", exit.ProcessState)
			return 1
		}
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: %v\n", err)
		return 1
	}
	return 0
}

func printAnalyzers() {
	fmt.Println("Analyzers (run 'avcheck help NAME' for one's documentation):")
	for _, a := range analyzers() {
		title, _, _ := strings.Cut(a.Doc, "\n")
		fmt.Printf("  %-12s%s\n", a.Name, title)
	}
}
