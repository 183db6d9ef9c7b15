package regions_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// The regions Result can be computed outside any driver, as the dynamic
// recorder does to build its probe plan: load the packages, run the
// analyzer with the checker API, and walk each function's regions and
// accesses.
func Example() {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax}
	pkgs, err := packages.Load(cfg, "./testdata/src/reg")
	if err != nil {
		log.Fatal(err)
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{regions.Analyzer}, pkgs, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, act := range graph.Roots {
		res := act.Result.(*regions.Result)
		for _, f := range res.Funcs {
			if f.Fn.Name() != "Double" {
				continue
			}
			for _, r := range f.Regions {
				pos := act.Package.Fset.Position(r.Pos)
				fmt.Printf("%s region at %s:%d\n", r.Kind, filepath.Base(pos.Filename), pos.Line)
				for _, a := range r.Accesses {
					fmt.Printf("  %s %s by %s, holding %s\n", a.Kind, a.Path, a.Expr, a.Held[0].Lock)
				}
			}
		}
	}
	// Output:
	// proximity region at reg.go:34
	//   read c.n by c.Get(), holding c.mu
	//   write c.n by c.Set(v * 2), holding c.mu
}
