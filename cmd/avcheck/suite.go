package main

import (
	"fmt"
	"strings"

	"github.com/avcheck/avcheck/analyzers/annotation"
	"github.com/avcheck/avcheck/analyzers/atomicact"
	"github.com/avcheck/avcheck/analyzers/guardedby"
	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/analyzers/splitlock"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/multichecker"
)

// analyzers is the static suite, in the order help lists them.
func analyzers() []*analysis.Analyzer {
	return []*analysis.Analyzer{
		annotation.Analyzer,
		regions.Analyzer,
		splitlock.Analyzer,
		atomicact.Analyzer,
		guardedby.Analyzer,
	}
}

// runSuite runs the static suite: standalone on package patterns, or as
// go vet's -vettool (the unitchecker .cfg protocol, -V=full, -flags), which
// multichecker recognises from its arguments. It does not return.
func runSuite() {
	multichecker.Main(analyzers()...)
}

func printAnalyzers() {
	fmt.Println("Analyzers (run 'avcheck help NAME' for one's documentation):")
	for _, a := range analyzers() {
		title, _, _ := strings.Cut(a.Doc, "\n")
		fmt.Printf("  %-14s%s\n", a.Name, title)
	}
}
