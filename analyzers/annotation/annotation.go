package annotation

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"github.com/avcheck/avcheck/internal/analyzerdoc"
	"golang.org/x/tools/go/analysis"
)

//go:embed doc.go
var doc string

// Category is the diagnostic category of a malformed annotation.
const Category = "malformed-annotation"

// Analyzer parses //avcheck: annotations and reports the malformed ones.
var Analyzer = &analysis.Analyzer{
	Name:       "annotation",
	Doc:        analyzerdoc.Extract(doc, "annotation"),
	URL:        "https://pkg.go.dev/github.com/avcheck/avcheck/analyzers/annotation",
	Run:        run,
	ResultType: reflect.TypeFor[*Set](),
}

// Set is the parsed annotations of one package.
type Set struct {
	fset *token.FileSet
	// AtomicFuncs are the functions annotated //avcheck:atomic.
	AtomicFuncs map[*ast.FuncDecl]bool
	// AtomicBlocks are the block statements annotated //avcheck:atomic.
	AtomicBlocks map[*ast.BlockStmt]bool
	// Guards maps a field or package-level variable to the mutex that
	// //avcheck:guardedby names for it.
	Guards map[*types.Var]*types.Var

	ignoreLines  map[lineKey]bool
	ignoreRanges []posRange
}

type lineKey struct {
	file string
	line int
}

type posRange struct{ pos, end token.Pos }

// Ignored reports whether an //avcheck:ignore annotation covers pos: one
// on its line or the line before, or in the doc comment of the function
// that contains it; or whether that function's doc comment holds the
// //go:norace directive.
func (s *Set) Ignored(pos token.Pos) bool {
	if s == nil || !pos.IsValid() {
		return false
	}
	for _, r := range s.ignoreRanges {
		if r.pos <= pos && pos < r.end {
			return true
		}
	}
	p := s.fset.Position(pos)
	return s.ignoreLines[lineKey{p.Filename, p.Line}]
}

// directive is one //avcheck: comment.
type directive struct {
	comment *ast.Comment
	name    string
	args    []string
}

func parseDirective(c *ast.Comment) (directive, bool) {
	rest, ok := strings.CutPrefix(c.Text, Prefix)
	if !ok {
		return directive{}, false
	}
	// A trailing comment may follow: //avcheck:guardedby mu // the cache
	if i := strings.Index(rest, "//"); i >= 0 {
		rest = rest[:i]
	}
	fields := strings.Fields(rest)
	d := directive{comment: c}
	if len(fields) > 0 && !strings.HasPrefix(rest, " ") {
		d.name, d.args = fields[0], fields[1:]
	}
	return d, true
}

func run(pass *analysis.Pass) (any, error) {
	s := &Set{
		fset:         pass.Fset,
		AtomicFuncs:  map[*ast.FuncDecl]bool{},
		AtomicBlocks: map[*ast.BlockStmt]bool{},
		Guards:       map[*types.Var]*types.Var{},
		ignoreLines:  map[lineKey]bool{},
	}
	for _, f := range pass.Files {
		parseFile(pass, s, f)
		ignoreNorace(s, f)
	}
	return s, nil
}

// ignoreNorace ignores the functions of f whose doc comment holds the
// compiler's //go:norace directive, as an //avcheck:ignore there would:
// the author has said that their accesses race on purpose, and the race
// detector does not look at them either.
func ignoreNorace(s *Set, f *ast.File) {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Doc == nil || fn.Body == nil {
			continue
		}
		for _, c := range fn.Doc.List {
			if strings.TrimSpace(c.Text) == "//go:norace" {
				s.ignoreRanges = append(s.ignoreRanges, posRange{fn.Pos(), fn.End()})
				break
			}
		}
	}
}

// attachments records what each comment group of a file is attached to.
type attachments struct {
	funcs    map[*ast.CommentGroup]*ast.FuncDecl
	fields   map[*ast.CommentGroup]*ast.Field
	structOf map[*ast.Field]*ast.StructType
	vars     map[*ast.CommentGroup]*ast.ValueSpec
	blocks   map[int]*ast.BlockStmt // bare block statements by the line of their "{"
}

func collect(pass *analysis.Pass, f *ast.File) attachments {
	a := attachments{
		funcs:    map[*ast.CommentGroup]*ast.FuncDecl{},
		fields:   map[*ast.CommentGroup]*ast.Field{},
		structOf: map[*ast.Field]*ast.StructType{},
		vars:     map[*ast.CommentGroup]*ast.ValueSpec{},
		blocks:   map[int]*ast.BlockStmt{},
	}
	addBlocks := func(list []ast.Stmt) {
		for _, st := range list {
			if b, ok := st.(*ast.BlockStmt); ok {
				a.blocks[pass.Fset.Position(b.Lbrace).Line] = b
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Doc != nil {
				a.funcs[n.Doc] = n
			}
		case *ast.StructType:
			for _, fld := range n.Fields.List {
				a.structOf[fld] = n
				if fld.Doc != nil {
					a.fields[fld.Doc] = fld
				}
				if fld.Comment != nil {
					a.fields[fld.Comment] = fld
				}
			}
		case *ast.GenDecl:
			if n.Tok == token.VAR && n.Doc != nil && len(n.Specs) == 1 {
				a.vars[n.Doc] = n.Specs[0].(*ast.ValueSpec)
			}
		case *ast.ValueSpec:
			if n.Doc != nil {
				a.vars[n.Doc] = n
			}
			if n.Comment != nil {
				a.vars[n.Comment] = n
			}
		case *ast.BlockStmt:
			addBlocks(n.List)
		case *ast.CaseClause:
			addBlocks(n.Body)
		case *ast.CommClause:
			addBlocks(n.Body)
		}
		return true
	})
	return a
}

func parseFile(pass *analysis.Pass, s *Set, f *ast.File) {
	var a *attachments
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			d, ok := parseDirective(c)
			if !ok {
				continue
			}
			if a == nil {
				at := collect(pass, f)
				a = &at
			}
			apply(pass, s, a, cg, d)
		}
	}
}

func malformed(pass *analysis.Pass, c *ast.Comment, format string, args ...any) {
	pass.Report(analysis.Diagnostic{
		Pos:      c.Pos(),
		End:      c.End(),
		Category: Category,
		Message:  "malformed annotation: " + fmt.Sprintf(format, args...),
	})
}

func apply(pass *analysis.Pass, s *Set, a *attachments, cg *ast.CommentGroup, d directive) {
	line := pass.Fset.Position(d.comment.Pos()).Line
	switch d.name {
	case Atomic:
		if len(d.args) > 0 {
			malformed(pass, d.comment, "%s%s takes no argument", Prefix, Atomic)
			return
		}
		if fn, ok := a.funcs[cg]; ok {
			if fn.Body != nil {
				s.AtomicFuncs[fn] = true
			}
			return
		}
		// A block annotated on the line of its "{" or on the line before.
		if b, ok := a.blocks[line]; ok {
			s.AtomicBlocks[b] = true
			return
		}
		if b, ok := a.blocks[pass.Fset.Position(cg.End()).Line+1]; ok {
			s.AtomicBlocks[b] = true
			return
		}
		malformed(pass, d.comment, "%s%s must be in a function's doc comment or just before a block statement", Prefix, Atomic)
	case GuardedBy:
		if len(d.args) != 1 {
			malformed(pass, d.comment, "%s%s takes one argument, the name of a mutex", Prefix, GuardedBy)
			return
		}
		applyGuard(pass, s, a, cg, d)
	case Ignore:
		if fn, ok := a.funcs[cg]; ok {
			s.ignoreRanges = append(s.ignoreRanges, posRange{fn.Pos(), fn.End()})
			return
		}
		file := pass.Fset.Position(d.comment.Pos()).Filename
		s.ignoreLines[lineKey{file, line}] = true
		s.ignoreLines[lineKey{file, line + 1}] = true
	case "":
		malformed(pass, d.comment, "%s must be followed by an annotation name, with no space: %s, %s or %s", Prefix, Atomic, GuardedBy, Ignore)
	default:
		malformed(pass, d.comment, "unknown annotation %s%s; known: %s, %s, %s", Prefix, d.name, Atomic, GuardedBy, Ignore)
	}
}

func applyGuard(pass *analysis.Pass, s *Set, a *attachments, cg *ast.CommentGroup, d directive) {
	name := d.args[0]
	if fld, ok := a.fields[cg]; ok {
		st := a.structOf[fld]
		var lock *types.Var
		for _, other := range st.Fields.List {
			for _, id := range other.Names {
				if id.Name == name {
					lock, _ = pass.TypesInfo.Defs[id].(*types.Var)
				}
			}
			if len(other.Names) == 0 { // embedded: sync.Mutex is named Mutex
				if v, ok := pass.TypesInfo.Defs[embeddedIdent(other.Type)].(*types.Var); ok && v.Name() == name {
					lock = v
				}
			}
		}
		if lock == nil || !IsMutex(lock.Type()) {
			malformed(pass, d.comment, "%s%s %s: the struct has no sync.Mutex or sync.RWMutex field %s", Prefix, GuardedBy, name, name)
			return
		}
		for _, v := range fieldVars(pass, fld) {
			s.Guards[v] = lock
		}
		return
	}
	if spec, ok := a.vars[cg]; ok {
		lock, _ := pass.Pkg.Scope().Lookup(name).(*types.Var)
		if lock == nil || !IsMutex(lock.Type()) {
			malformed(pass, d.comment, "%s%s %s: the package has no sync.Mutex or sync.RWMutex variable %s", Prefix, GuardedBy, name, name)
			return
		}
		for _, id := range spec.Names {
			if v, ok := pass.TypesInfo.Defs[id].(*types.Var); ok && v.Parent() == pass.Pkg.Scope() {
				s.Guards[v] = lock
			}
		}
		return
	}
	malformed(pass, d.comment, "%s%s must annotate a struct field or a package-level variable", Prefix, GuardedBy)
}

func fieldVars(pass *analysis.Pass, fld *ast.Field) []*types.Var {
	var vs []*types.Var
	for _, id := range fld.Names {
		if v, ok := pass.TypesInfo.Defs[id].(*types.Var); ok {
			vs = append(vs, v)
		}
	}
	if len(fld.Names) == 0 {
		if v, ok := pass.TypesInfo.Defs[embeddedIdent(fld.Type)].(*types.Var); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// embeddedIdent returns the identifier that names an embedded field.
func embeddedIdent(e ast.Expr) *ast.Ident {
	switch e := e.(type) {
	case *ast.Ident:
		return e
	case *ast.StarExpr:
		return embeddedIdent(e.X)
	case *ast.SelectorExpr:
		return e.Sel
	case *ast.IndexExpr:
		return embeddedIdent(e.X)
	case *ast.IndexListExpr:
		return embeddedIdent(e.X)
	}
	return nil
}

// IsMutex reports whether t is sync.Mutex or sync.RWMutex, or a pointer
// to one.
func IsMutex(t types.Type) bool {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "sync" {
		return false
	}
	return n.Obj().Name() == "Mutex" || n.Obj().Name() == "RWMutex"
}
