// Package suite lists avcheck's static analyzers: the one list that the
// avcheck command and the golangci-lint plugin both run.
package suite

import (
	"github.com/avcheck/avcheck/analyzers/annotation"
	"github.com/avcheck/avcheck/analyzers/atomicact"
	"github.com/avcheck/avcheck/analyzers/avreport"
	"github.com/avcheck/avcheck/analyzers/guardedby"
	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/analyzers/splitlock"
	"golang.org/x/tools/go/analysis"
)

// Analyzers returns the static suite, in the order avcheck help lists
// them. The helper analyzers (annotation, regions) come first; they report
// nothing themselves.
func Analyzers() []*analysis.Analyzer {
	return []*analysis.Analyzer{
		annotation.Analyzer,
		regions.Analyzer,
		splitlock.Analyzer,
		atomicact.Analyzer,
		guardedby.Analyzer,
		avreport.Analyzer,
	}
}
