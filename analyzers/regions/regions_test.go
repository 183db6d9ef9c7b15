package regions_test

import (
	"fmt"
	"go/token"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/analysis/analysistest"
)

// dump renders a Result as one line per access and region, with lines
// instead of positions, so tests can compare it exactly.
func dump(fset *token.FileSet, res *regions.Result) string {
	var b strings.Builder
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, f := range res.Funcs {
		fmt.Fprintf(&b, "func %s\n", f.Fn.Name())
		for _, a := range f.Accesses {
			fmt.Fprintf(&b, "  %d %s %s", line(a.Pos), a.Kind, a.Path)
			if a.Atomic != "" {
				fmt.Fprintf(&b, " atomic.%s", a.Atomic)
			}
			if a.Via != "" {
				fmt.Fprintf(&b, " via %s", a.Expr)
			}
			for _, h := range a.Held {
				fmt.Fprintf(&b, " [%s#%d]", h.Lock, h.CS)
			}
			b.WriteByte('\n')
		}
		for _, r := range f.Regions {
			fmt.Fprintf(&b, "  region %s %d-%d:", r.Kind, line(r.Pos), line(r.End))
			for _, a := range r.Accesses {
				fmt.Fprintf(&b, " %s@%d", a.Path, line(a.Pos))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestDumpHelpers(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), regions.Analyzer, "helpers")
	for _, r := range results {
		t.Log("\n" + dump(r.Pass.Fset, r.Result.(*regions.Result)))
	}
}
