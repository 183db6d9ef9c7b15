package regions

import (
	_ "embed"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"sort"

	"github.com/avcheck/avcheck/analyzers/annotation"
	"github.com/avcheck/avcheck/internal/analyzerdoc"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/ssa"
)

//go:embed doc.go
var doc string

// Config holds the analyzer's options.
type Config struct {
	// MaxD is BEST's maxd: how many source lines apart two accesses may
	// be and still belong to one proximity region.
	MaxD int
}

// DefaultConfig returns the options avcheck uses unless told otherwise.
func DefaultConfig() *Config { return &Config{MaxD: 5} }

// Analyzer is the regions analyzer with the default options; its flag
// -maxd sets Config.MaxD.
var Analyzer = New(DefaultConfig())

// New returns a regions analyzer with the given options, which its flags
// then set.
func New(cfg *Config) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:       "regions",
		Doc:        analyzerdoc.Extract(doc, "regions"),
		URL:        "https://pkg.go.dev/github.com/avcheck/avcheck/analyzers/regions",
		Requires:   []*analysis.Analyzer{buildssa.Analyzer, annotation.Analyzer},
		ResultType: reflect.TypeFor[*Result](),
		FactTypes:  []analysis.Fact{new(Summary)},
		Run:        func(pass *analysis.Pass) (any, error) { return run(pass, cfg) },
	}
	a.Flags.IntVar(&cfg.MaxD, "maxd", cfg.MaxD, "how many source lines apart two accesses may be and still form one proximity region")
	return a
}

func run(pass *analysis.Pass, cfg *Config) (any, error) {
	ssaInfo := pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA)
	ps := &passState{
		pass:        pass,
		cfg:         cfg,
		ann:         pass.ResultOf[annotation.Analyzer].(*annotation.Set),
		funcs:       map[*ssa.Function]*Func{},
		exprs:       exprIndex(pass.Files),
		unevaluated: unevaluatedRanges(pass.TypesInfo, pass.Files),
	}
	ps.linked = linknames(pass.Files)
	ps.fixed = newFixedFields(pass.Pkg, ssaInfo.SrcFuncs)
	res := &Result{ByFunc: map[*ssa.Function]*Func{}}
	for _, fn := range ssaInfo.SrcFuncs {
		f := ps.analyze(fn)
		f.Linked = ps.linkedFrom(fn)
		res.Funcs = append(res.Funcs, f)
		res.ByFunc[fn] = f
		if obj := funcObject(fn); obj != nil && fn.Parent() == nil && obj.Pkg() == pass.Pkg && !f.Summary.empty() {
			pass.ExportObjectFact(obj, f.Summary)
		}
	}
	sort.SliceStable(res.Funcs, func(i, j int) bool { return res.Funcs[i].Fn.Pos() < res.Funcs[j].Fn.Pos() })
	return res, nil
}

func (s *Summary) empty() bool {
	return len(s.Accesses) == 0 && len(s.Locks) == 0 && len(s.Acquires) == 0 && len(s.Releases) == 0 && len(s.Callbacks) == 0 &&
		len(s.Escapes) == 0 && len(s.Fresh) == 0
}

// exprIndex maps the positions SSA instructions carry (a selector's
// field name, an index's bracket, a call's parenthesis, an identifier)
// to the source expression there.
func exprIndex(files []*ast.File) map[token.Pos]ast.Expr {
	m := map[token.Pos]ast.Expr{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				m[n.Sel.Pos()] = n
			case *ast.IndexExpr:
				m[n.Lbrack] = n
			case *ast.CallExpr:
				m[n.Lparen] = n
			case *ast.StarExpr:
				m[n.Star] = n
			case *ast.UnaryExpr:
				m[n.OpPos] = n
			case *ast.Ident:
				if _, ok := m[n.Pos()]; !ok {
					m[n.Pos()] = n
				}
			case *ast.AssignStmt:
				if len(n.Lhs) == 1 {
					m[n.TokPos] = n.Lhs[0]
				}
			case *ast.IncDecStmt:
				m[n.TokPos] = n.X
			}
			return true
		})
	}
	return m
}

// unevaluatedRanges returns the spans of the range expressions that Go
// does not evaluate: "if at most one iteration variable is present and
// len(x) is constant, the range expression is not evaluated" (the
// language specification, For statements with range clause), which
// holds for an array, or a pointer to one, reached without a call or a
// receive. SSA loads the array there all the same (for i := range
// c.segments reads nothing of c.segments), and those loads are not
// accesses.
func unevaluatedRanges(info *types.Info, files []*ast.File) [][2]token.Pos {
	var spans [][2]token.Pos
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			r, ok := n.(*ast.RangeStmt)
			if !ok || r.Value != nil && !isBlank(r.Value) || !constLen(info, r.X) {
				return true
			}
			spans = append(spans, [2]token.Pos{r.X.Pos(), r.X.End()})
			return true
		})
	}
	return spans
}

func isBlank(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "_"
}

// constLen reports whether len(x) is a constant: x is an array or a
// pointer to an array, and holds no call other than a conversion or a
// constant one, and no receive.
func constLen(info *types.Info, x ast.Expr) bool {
	t := info.TypeOf(x)
	if t == nil {
		return false
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if _, ok := t.Underlying().(*types.Array); !ok {
		return false
	}
	evaluated := false
	ast.Inspect(x, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if tv, ok := info.Types[n.Fun]; !ok || !tv.IsType() {
				if tv, ok := info.Types[n]; !ok || tv.Value == nil {
					evaluated = true
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				evaluated = true
			}
		case *ast.FuncLit:
			return false
		}
		return !evaluated
	})
	return !evaluated
}

// inUnevaluated reports whether pos is inside a range expression that
// is not evaluated.
func (ps *passState) inUnevaluated(pos token.Pos) bool {
	for _, s := range ps.unevaluated {
		if s[0] <= pos && pos < s[1] {
			return true
		}
	}
	return false
}
