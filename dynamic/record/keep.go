package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Reads into the blank identifier.
//
// The compiler emits no instruction for "_ = x" when evaluating x cannot
// fail or call anything (a package-level variable, a captured variable),
// even with -gcflags=all=-N -l: the load's result is unused, and the
// compiler drops it. Such a line has no address in the binary, so the
// debugger has nowhere to stop, and the read the source writes would go
// unrecorded. The recorder's build therefore compiles, through the go
// command's -overlay, a copy of each file with such a statement in which
// "_ = x" (or "_, _ = x, y") is a call of a function that does nothing,
// "avcheckKeep1(x)", declared at the end of the copy: the call keeps the
// load, on the same line. Lines and the order of the functions (and so
// the compiler's names of function literals) stay those of the source;
// only the columns of the rewritten lines move, and the binary's line
// table has no columns.

// Keep is one blank assignment of a file that the recorder's build
// rewrites into a call: bytes [Start, Head) ("_ = ") become the call's
// name and its opening parenthesis, and a closing one follows End, the end
// of the last value assigned.
type Keep struct {
	Start, Head, End int
}

// KeepFile is what the recorder's build changes in one file: its blank
// assignments, and the name of the function they call, unused elsewhere
// in the file's package.
type KeepFile struct {
	Func  string
	Keeps []Keep
}

// addKeeps finds, in the files of the packages under test, the blank
// assignments whose values hold a read the plan probes.
func (plan *Plan) addKeeps(pkgs []*packages.Package) {
	probed := make(map[Line][]int) // the columns of the reads probed at a line
	for l, ps := range plan.Accesses {
		for _, p := range ps {
			if !p.Write && p.Atomic == "" {
				probed[l] = append(probed[l], p.Col)
			}
		}
	}
	n := 0
	for _, p := range pkgs {
		goFiles := make(map[string]bool, len(p.GoFiles))
		for _, f := range p.GoFiles {
			goFiles[f] = true
		}
		for i, f := range p.Syntax {
			name := p.CompiledGoFiles[i]
			if !goFiles[name] || plan.Keeps[name] != nil {
				continue // a file cgo generated, or one seen in another variant
			}
			var keeps []Keep
			ast.Inspect(f, func(node ast.Node) bool {
				as, ok := node.(*ast.AssignStmt)
				if !ok || as.Tok != token.ASSIGN || !allBlank(as.Lhs) || !holdsProbe(p.Fset, as.Rhs, probed) {
					return true
				}
				keeps = append(keeps, Keep{
					Start: p.Fset.Position(as.Pos()).Offset,
					Head:  p.Fset.Position(as.Rhs[0].Pos()).Offset,
					End:   p.Fset.Position(as.Rhs[len(as.Rhs)-1].End()).Offset,
				})
				return true
			})
			if len(keeps) == 0 {
				continue
			}
			fn := ""
			for fn == "" || p.Types.Scope().Lookup(fn) != nil || declaredIn(f, fn) {
				n++
				fn = "avcheckKeep" + strconv.Itoa(n)
			}
			if plan.Keeps == nil {
				plan.Keeps = make(map[string]*KeepFile)
			}
			plan.Keeps[name] = &KeepFile{Func: fn, Keeps: keeps}
		}
	}
}

func allBlank(lhs []ast.Expr) bool {
	for _, e := range lhs {
		if id, ok := e.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	return len(lhs) > 0
}

// holdsProbe reports whether a probed read lies within exprs.
func holdsProbe(fset *token.FileSet, exprs []ast.Expr, probed map[Line][]int) bool {
	for _, e := range exprs {
		b, end := fset.Position(e.Pos()), fset.Position(e.End())
		for line := b.Line; line <= end.Line; line++ {
			for _, col := range probed[Line{b.Filename, line}] {
				if (line > b.Line || col >= b.Column) && (line < end.Line || col < end.Column) {
					return true
				}
			}
		}
	}
	return false
}

// declaredIn reports whether name is declared anywhere in f, in any scope
// (a local variable would shadow the function the rewrite calls).
func declaredIn(f *ast.File, name string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// keptSource returns the source of file with its blank assignments
// rewritten as calls of kf.Func, declared at its end.
func keptSource(src []byte, kf *KeepFile) ([]byte, error) {
	var b bytes.Buffer
	last := 0
	keeps := slices.Clone(kf.Keeps)
	slices.SortFunc(keeps, func(a, b Keep) int { return a.Start - b.Start })
	for _, k := range keeps {
		if k.Start < last || k.Head < k.Start || k.End < k.Head || k.End > len(src) {
			return nil, fmt.Errorf("the blank assignments planned do not match the source")
		}
		b.Write(src[last:k.Start])
		b.WriteString(kf.Func + "(")
		// The lines between "_ =" and the value stay lines.
		b.WriteString(strings.Repeat("\n", bytes.Count(src[k.Start:k.Head], []byte("\n"))))
		b.Write(src[k.Head:k.End])
		b.WriteString(")")
		last = k.End
	}
	b.Write(src[last:])
	fmt.Fprintf(&b, "\n\n// %s keeps the reads of a blank assignment in avcheck run's build.\nfunc %s(...interface{}) {}\n", kf.Func, kf.Func)
	return b.Bytes(), nil
}

// writeOverlay writes, into dir, the rewritten copies of the plan's files
// with blank assignments and the go command's overlay file naming them,
// and returns the overlay file's path; "" if no file needs it.
func writeOverlay(dir string, plan *Plan) (string, error) {
	if plan == nil || len(plan.Keeps) == 0 {
		return "", nil
	}
	replace := make(map[string]string)
	names := make([]string, 0, len(plan.Keeps))
	for name := range plan.Keeps {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			return "", err
		}
		kept, err := keptSource(src, plan.Keeps[name])
		if err != nil {
			return "", fmt.Errorf("%s: %w (was it changed since avcheck run loaded it?)", name, err)
		}
		copyPath := filepath.Join(dir, strconv.Itoa(i)+"_"+filepath.Base(name))
		if err := os.WriteFile(copyPath, kept, 0o600); err != nil {
			return "", err
		}
		replace[name] = copyPath
	}
	data, err := json.Marshal(struct{ Replace map[string]string }{replace})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, data, 0o600)
}
