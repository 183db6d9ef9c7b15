// Command avcheck finds atomicity violations in Go programs.
//
// With package patterns, or as go vet's -vettool, it runs the static
// analyzer suite. Its subcommands run the dynamic checker:
//
//	avcheck ./...                          # the static suite
//	go vet -vettool=$(which avcheck) ./... # the same, through go vet
//	avcheck predict trace.avt              # predict on a saved trace
//	avcheck run ./pkg -run TestX           # record a run, predict, report
//	avcheck help                           # analyzers and subcommands
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if os.Getenv(replayChildEnv) != "" {
		os.Exit(replayChild(os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 {
		if versionFlag(os.Args[1]) {
			os.Exit(versionMain(os.Args[1:], os.Stdout, os.Stderr))
		}
		if sub, ok := subcommands[os.Args[1]]; ok {
			os.Exit(sub.run(os.Args[2:]))
		}
		if os.Args[1] == "help" && len(os.Args) == 2 {
			printHelp()
			os.Exit(0)
		}
	}
	runSuite()
}

// subcommand is a mode of avcheck other than the static suite.
type subcommand struct {
	usage string // one line: "avcheck predict [flags] FILE"
	short string // what it does, for avcheck help
	run   func(args []string) int
}

// subcommands maps the first argument to the dynamic checker's modes. A
// package pattern can never be one of these words, so the dispatch is
// unambiguous; "./run" reaches a package of that name.
var subcommands = map[string]subcommand{
	"predict": {
		usage: "avcheck predict [flags] FILE",
		short: "predict atomicity violations from a saved trace",
		run:   runPredict,
	},
	"run": {
		usage: "avcheck run [flags] [package] [-- args]",
		short: "record a test or program, predict, report",
		run:   runRecord,
	},
	"test": {
		usage: "avcheck test [flags] [packages]",
		short: "record the tests of every package matched, predict, report",
		run:   runTest,
	},
	"report-hash": {
		usage: "avcheck report-hash [FILE]",
		short: "print the hash of avcheck run's report, for go vet's -avreport.hash",
		run:   runReportHash,
	},
}

func printHelp() {
	fmt.Println("avcheck finds atomicity violations: code meant to run as one indivisible step")
	fmt.Println("that another goroutine can interleave.")
	fmt.Println()
	fmt.Println("Usage:")
	fmt.Println("  avcheck [-flag...] package...           run the static suite")
	fmt.Println("  avcheck -json|-sarif package...         the same, as go vet -json's JSON or as SARIF 2.1.0")
	fmt.Println("  go vet -vettool=$(which avcheck) pkg... the same, through go vet")
	for _, name := range []string{"predict", "run", "test", "report-hash"} {
		if sub, ok := subcommands[name]; ok {
			fmt.Printf("  %-40s%s\n", sub.usage, sub.short)
		}
	}
	fmt.Println("  avcheck help [analyzer|subcommand]      this text, or one analyzer's or subcommand's documentation")
	fmt.Println("  avcheck -V                              the version")
	fmt.Println()
	fmt.Println("Exit status, in every mode: 0 nothing reported, 3 findings reported, 1 an error")
	fmt.Println("(a package that does not build, a trace that cannot be read), 2 bad usage.")
	fmt.Println()
	printAnalyzers()
}

// parseInterleaved parses fs's flags wherever they stand among the
// positional arguments, as go test takes them (avcheck run ./pkg -run X);
// "--" ends the flags, and what follows it is positional. It returns the
// positional arguments, or fs.Parse's error.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		if n := len(args) - len(fs.Args()); n > 0 && args[n-1] == "--" {
			return append(pos, fs.Args()...), nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
