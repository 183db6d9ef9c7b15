// Package report turns the findings of dynamic/predict into what people
// and tools read: compiler-style text (file:line:col: message, the other
// accesses indented below, then the witness schedule) and JSON with a
// stable schema (see docs/predict.md).
//
// Every finding goes through Message, so the wording of a kind of finding
// is the same in every output.
package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/intent"
)

// Stats describes the run a report is about.
type Stats struct {
	Events     int     `json:"events"`
	Goroutines int     `json:"goroutines"`
	Variables  int     `json:"variables"`
	Seconds    float64 `json:"seconds"`
}

// Verb says what an access does, as a present-tense verb ("reads",
// "atomically stores"), as the reports word it.
func Verb(k trace.Kind) string {
	switch k {
	case trace.KindRead:
		return "reads"
	case trace.KindWrite:
		return "writes"
	case trace.KindAtomicLoad:
		return "atomically loads"
	case trace.KindAtomicStore:
		return "atomically stores"
	case trace.KindAtomicRMW:
		return "atomically updates"
	}
	return k.String()
}

// noun names an access as a noun phrase: "write", "read".
func noun(k trace.Kind) string {
	if k.IsWrite() {
		return "write"
	}
	return "read"
}

// consequence says what goes wrong for each unserializable triplet
// (Table 1 of AVFilter, shared/seeds/000_5650ed431402be49.txt).
func consequence(pattern string) string {
	switch pattern {
	case "R-W-R":
		return "the two reads can see different values"
	case "W-W-R":
		return "the read can miss the region's own write"
	case "W-R-W":
		return "the other goroutine can see an intermediate value"
	case "R-W-W":
		return "the update can be lost"
	case "W-W-W":
		return "the other goroutine's write can be lost"
	}
	return "the region is not serializable"
}

// Message returns the one-line diagnostic for a finding: lowercase, no
// final period, naming the rule and the evidence.
func Message(t *trace.Trace, f *predict.Finding) string {
	acc := f.Accesses
	g := func(i int) string { return fmt.Sprintf("g%d", acc[i].G) }
	switch f.Kind {
	case predict.KindAtomicity:
		if len(acc) != 3 {
			break
		}
		did := fmt.Sprintf("%s then %s %s", Verb(acc[0].Op), Verb(acc[2].Op), f.Var)
		if acc[0].Op == acc[2].Op {
			did = fmt.Sprintf("%s %s twice", Verb(acc[0].Op), f.Var)
		}
		why := consequence(f.Pattern)
		return fmt.Sprintf("%s: %s %s in one region, and %s's %s can run between them (%s); %s",
			f.Var, g(0), did, g(1), noun(acc[1].Op), f.Pattern, why)
	case predict.KindRace:
		if len(acc) != 2 {
			break
		}
		return fmt.Sprintf("%s: %s's %s and %s's %s of %s can run back to back, with no common lock and no happens-before order (data race %s)",
			f.Var, g(0), noun(acc[0].Op), g(1), noun(acc[1].Op), f.Var, f.Pattern)
	case predict.KindAtomicSet:
		if len(acc) != 4 {
			break
		}
		x, y := varOf(t, acc[0]), varOf(t, acc[3])
		return fmt.Sprintf("%s: %s's region %s %s and then %s %s, and %s's region can access both between them (%s); the pair can be seen or left inconsistent",
			f.Var, g(0), Verb(acc[0].Op), x, Verb(acc[3].Op), y, g(1), f.Pattern)
	case predict.KindUnserializable:
		return fmt.Sprintf("%s: the recorded run is not conflict-serializable (%s)", f.Var, f.Pattern)
	}
	return fmt.Sprintf("%s: %s %s", f.Var, f.Kind, f.Pattern)
}

func varOf(t *trace.Trace, a predict.Access) string {
	if n := t.Object(a.Obj).Name; n != "" {
		return n
	}
	return fmt.Sprintf("%#x", uint64(a.Obj))
}

// position renders a site as file:line:col, with "-" for an unknown site.
func position(s trace.Site) string {
	if s.File == "" {
		return "-"
	}
	if s.Col == 0 {
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)
}

// IntentText says why f's region is meant to be atomic, as its region's
// intent states it, with positions relative to dir as relPath makes them;
// "" for a finding that no region's intent stands behind (a race, or a
// trace that does not say).
func IntentText(t *trace.Trace, f *predict.Finding, dir string) string {
	in := f.Intent
	if in.Evidence == intent.Unstated {
		return ""
	}
	at := func(id trace.SiteID) string {
		if id == 0 {
			return ""
		}
		return position(relPath(dir, t.Site(id)))
	}
	return intent.Describe(in.Evidence, at(in.From), at(in.To), "")
}

// relPath shortens a site's file name as ShortPath does.
func relPath(dir string, s trace.Site) trace.Site {
	s.File = ShortPath(dir, s.File)
	return s
}

// ShortPath returns the absolute file name path relative to dir when that
// is shorter and names the same file, and otherwise path: the form in
// which the go command, go vet included, prints file names, relative to
// the current directory where possible ("../x.go" too). A relative path,
// or an empty dir, leaves path as it is.
func ShortPath(dir, path string) string {
	if dir == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || len(rel) >= len(path) {
		return path
	}
	// Rel works on the names alone; through a symbolic link in dir,
	// "../x.go" can name another file than path does. (Joined without
	// cleaning, so that ".." is resolved by the system.)
	if !sameFile(dir+string(filepath.Separator)+rel, path) {
		return path
	}
	return rel
}

// sameFile reports whether a and b name the same file, or both name none
// (a trace recorded on another machine).
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return errors.Is(errA, fs.ErrNotExist) && errors.Is(errB, fs.ErrNotExist)
	}
	return os.SameFile(fa, fb)
}
