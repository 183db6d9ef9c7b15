package splitlock

import (
	_ "embed"
	"fmt"
	"go/token"

	"github.com/avcheck/avcheck/analyzers/annotation"
	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/internal/analyzerdoc"
	"github.com/avcheck/avcheck/internal/diag"
	"github.com/avcheck/avcheck/internal/intent"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

//go:embed doc.go
var doc string

// Category is the diagnostic category of every splitlock finding.
const Category = "split-critical-section"

// Analyzer reports updates split across two critical sections.
var Analyzer = &analysis.Analyzer{
	Name:     "splitlock",
	Doc:      analyzerdoc.Extract(doc, "splitlock"),
	URL:      "https://pkg.go.dev/github.com/avcheck/avcheck/analyzers/splitlock",
	Requires: []*analysis.Analyzer{regions.Analyzer, annotation.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[regions.Analyzer].(*regions.Result)
	ann := pass.ResultOf[annotation.Analyzer].(*annotation.Set)
	owner := regions.Owners(res)
	for _, f := range res.Funcs {
		check(pass, ann, res, owner, f)
	}
	return nil, nil
}

// maxRelated bounds the later writes listed under one finding.
const maxRelated = 3

func check(pass *analysis.Pass, ann *annotation.Set, res *regions.Result, owner map[*ssa.Function]*ssa.Function, f *regions.Func) {
	reported := map[token.Pos]bool{}
	startup := regions.StartupOf(res, f)
	for _, r := range f.Accesses {
		if r.Kind != regions.Read || r.Atomic != "" || r.Sync || len(r.Held) == 0 || reported[r.Pos] {
			continue
		}
		key := r.Path.Key()
		if updatedWith(f, r) {
			continue
		}
		// In a package initialiser or before m.Run, nothing can run
		// between two accesses that both precede the first goroutine.
		alone := startup.Alone(r)
		var related []diag.Related
		var lock string
		anyData := false
		for _, w := range f.Accesses {
			if w.Kind != regions.Write || w.Atomic != "" || w.Rechecked || w.Path.Key() != key || w.Instr == r.Instr {
				continue
			}
			if alone && startup.Alone(w) {
				continue
			}
			l, ok := splitBy(r, w)
			if !ok {
				continue
			}
			// The shared rule of intent (regions.Func.Evidence): without
			// evidence linking the read to the write, two critical
			// sections are two steps, as c.Inc(); c.Get() is.
			ev := f.Evidence(r, w)
			if ev != intent.WriteBack && ev != intent.Branch {
				continue
			}
			data := ev == intent.WriteBack && !w.Refreshed
			if !data {
				// A write that reads the state afresh loses no update;
				// it is stale only if the read decided it.
				if _, control := f.Feeds(r, w); !control {
					continue
				}
				// A counter drained by one goroutine and filled by the
				// others (monotone.go).
				if w.Refreshed && monotone(res, owner, f, r, w) {
					continue
				}
			}
			if lock == "" {
				lock = l
			}
			anyData = anyData || data
			if len(related) < maxRelated && (len(related) == 0 || related[len(related)-1].Pos != w.Pos) {
				related = append(related, diag.Related{Pos: w.Pos, Message: fmt.Sprintf("%s written%s in a later critical section of %s", r.Path, via(w), l)})
			}
		}
		if lock == "" {
			continue
		}
		reported[r.Pos] = true
		if anyData {
			diag.Report(pass, ann, Category, r.Pos, related,
				"%s is read%s and written in two critical sections of %s; the update can be lost", r.Path, via(r), lock)
		} else {
			diag.Report(pass, ann, Category, r.Pos, related,
				"%s is checked%s in one critical section of %s and written in another; the check can be stale by the time of the write", r.Path, via(r), lock)
		}
	}
}

// updatedWith reports whether r's own critical section also writes the
// state r reads: the check and its act were atomic, and a write in a
// later critical section follows that update, not the check.
func updatedWith(f *regions.Func, r *regions.Access) bool {
	for _, w := range f.Accesses {
		// Accesses through one call share its position.
		later := w.Pos > r.Pos || w.Instr == r.Instr && w != r
		if w.Kind == regions.Write && w.Path.Key() == r.Path.Key() && later && regions.SameCS(r, w) {
			return true
		}
	}
	return false
}

// splitBy returns the lock that r and w both hold, in two different
// critical sections, when they share no critical section of any lock.
func splitBy(r, w *regions.Access) (string, bool) {
	var lock string
	for _, h := range r.Held {
		hw, ok := w.HeldLock(h.Lock.Key())
		if !ok {
			continue
		}
		if hw.CS == h.CS {
			return "", false // one critical section holds both
		}
		if lock == "" {
			lock = h.Lock.String()
		}
	}
	return lock, lock != ""
}

func via(a *regions.Access) string {
	if a.Via == "" {
		return ""
	}
	return " by " + regions.Short(a.Expr)
}
