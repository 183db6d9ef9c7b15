package record

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"sort"
	"strings"

	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/children"
	"github.com/avcheck/avcheck/internal/intent"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
)

// Line is a source line, the unit at which the recorder stops.
type Line struct {
	File string // absolute path, as the compiler writes it in the binary
	Line int
}

// AccessProbe is one access of shared state the recorder evaluates when a
// goroutine stops at its line.
type AccessProbe struct {
	Expr  string // the source expression, such as "a.balance"
	Write bool
	Col   int
	Func  string // the enclosing function, for the trace's sites
	// Atomic is the sync/atomic operation ("Load", "Store", "Add", ...),
	// or "" for a plain access.
	Atomic string
	// Guard, on a plain read, says how the value read is used, from which
	// the recorder computes the values the read may see without changing
	// its goroutine's course (guards.go); nil if some use is not known.
	Guard *Guard
	// AddrVaries, on a write, says it stores to an array or slice element
	// at an index that is not a constant: an index read from memory
	// would move it elsewhere (trace.AddrVaries; guards.go).
	AddrVaries bool
	// Const, on a plain write, is the value it stores when that is a
	// constant of the program (true, nil, 0, a named constant) of an
	// integer, boolean or pointer type, encoded as a read of it records
	// its value (trace.ValueConst; consts.go); nil otherwise.
	Const *uint64
	// Map and Key are the map and the key of an access to a map element
	// (m[k], delete(m, k)), recorded as a variable of its own (maps.go);
	// "" otherwise.
	Map, Key string
	// Contents says the access is a read of the whole map Map's contents
	// (len(m), range m), recorded as a read of the variable that every
	// write of one of its elements writes too (maps.go).
	Contents bool
	// AfterCall, on a plain write, says it is a left operand of an
	// assignment whose right side calls a function or receives: the
	// write happens once that returned, and is recorded then
	// (aftercall.go).
	AfterCall bool
	// Rechecks, on a plain read, says it checks its state again in its
	// critical section to decide a write of it (trace.Rechecks).
	Rechecks bool
	// Elems, on an access of copy(dst, src), is the slice whose elements
	// it reads (src) or writes (dst), and Other the other argument, whose
	// length bounds how many: the elements are recorded one by one, the
	// first avrt.MaxElems of them (copies.go). "" otherwise.
	Elems, Other string
}

// RegionProbe is an intended atomic region of the plan.
type RegionProbe struct {
	ID       int // 1-based, the trace's RegionID
	Kind     string
	Begin    Line
	EndLine  int // the region ends when its frame leaves [Begin.Line, EndLine]
	Func     string
	BeginCol int
	Accesses int
	// Intent is why the region is meant to be atomic (regions.Intent),
	// and Evidence the positions of the two accesses it links, zero
	// where it links none. A region with intent.None is only proposed:
	// the predictors show its violations at level predicted at most.
	Intent   intent.Evidence
	Evidence [2]Spot
}

// Spot is a position in a line.
type Spot struct {
	Line
	Col int
}

// Plan is what the recorder probes: the accesses of shared state, the go
// statements and the regions of the packages under test, computed by the
// regions analyzer. Lock and WaitGroup operations are probed at the sync
// package's methods, so they need no sites here; LockNames only names the
// locks for the report.
type Plan struct {
	Accesses  map[Line][]AccessProbe
	Gos       map[Line]string // go statement sites, with their function
	Regions   []RegionProbe
	RegionAt  map[Line][]int // region ids beginning at a line
	LockNames map[Line]string
	// Conds holds, per file, the lines of conditional branches (if, for,
	// switch, select, && and ||): the recorder counts those a goroutine
	// passes between two stops, AVFilter's br.
	Conds map[string][]int
	// Calls holds, per file, the lines of the calls that may branch on a
	// value read (calls.go), and Defers those of them that are deferred:
	// the recorder counts them as branches too. CallSites names the
	// callees of those calls, per line (calleeName).
	Calls, Defers map[string][]int
	CallSites     map[Line][]string
	// Funcs holds, per file, the extents of its functions (declarations
	// and literals), sorted by their first line: the recorder counts the
	// branches of a function from a stop to its end when it returns, and
	// from its start to a stop when it was entered.
	Funcs map[string][]FuncRange
	Files map[string]bool // the files of the packages under test
	// Main says the package is a main package, and HasTests that it has
	// test files: a main package without tests is run as a program.
	Main, HasTests bool
	// Skipped counts accesses made through calls (their callees' own
	// accesses are probed where they happen) and other accesses that
	// have no expression to evaluate.
	Skipped int
	// Unprobed lists the accesses of the packages under test that the
	// plan does not probe, with why (unrecorded.go).
	Unprobed []Unprobed
	// Keeps holds, per file, the blank assignments ("_ = x") of probed
	// reads, which the recorder's build rewrites so that the compiler
	// keeps the read (keep.go).
	Keeps map[string]*KeepFile
	// BuildFlags are the go command's flags that every build of the plan's
	// package takes, as its packages were loaded: the build tags
	// (PlanOptions.Tags).
	BuildFlags []string
	// pkgs are the packages MakePlan analysed (the package, its test
	// variants, the packages of the main module it imports), which the
	// instrumenting recorder rewrites (instrument.go).
	pkgs []*packages.Package
}

// ExprsAt returns the source expressions of the accesses the plan probes
// at a trace's site (its file, line and column; one column can hold
// several, b.accts and b.accts[i]), none if it probes none there. The
// trace names an object after its first access; another access of it
// may be through another expression, which the replay evaluates
// (dynamic/replay.FromTrace).
func (p *Plan) ExprsAt(s trace.Site) []string {
	var out []string
	for _, a := range p.Accesses[Line{s.File, s.Line}] {
		if a.Col == s.Col {
			out = append(out, a.Expr)
		}
	}
	return out
}

// AfterCall says whether the plan's write at site s is made once a call
// or receive of its assignment returned (AccessProbe.AfterCall).
func (p *Plan) AfterCall(s trace.Site) bool {
	for _, a := range p.Accesses[Line{s.File, s.Line}] {
		if a.Col == s.Col && a.AfterCall {
			return true
		}
	}
	return false
}

// Lines returns every line the recorder sets a breakpoint at, sorted: the
// lines of accesses and go statements. A region needs no line of its own:
// it begins at the first stop inside it.
func (p *Plan) Lines() []Line {
	set := make(map[Line]bool)
	for l := range p.Accesses {
		set[l] = true
	}
	for l := range p.Gos {
		set[l] = true
	}
	out := make([]Line, 0, len(set))
	for l := range set {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// PlanOptions says what to plan for.
type PlanOptions struct {
	Dir     string // the directory to resolve Pattern in, like go test's
	Pattern string // one package
	MaxD    int    // the regions analyzer's -maxd; 0 means its default
	// Tags is the build tags, comma-separated, as go test -tags takes
	// them: the plan's packages are loaded with them, and the plan's
	// builds made with them (Plan.BuildFlags).
	Tags string
	// Context, if not nil, stops the loading of the packages (the go
	// command it runs) when it is done; MakePlan then returns its error.
	Context context.Context
	// WorkDir, if not empty, is where the go command makes its work
	// directory (GOTMPDIR), which the caller removes; otherwise MakePlan
	// makes one and removes it.
	WorkDir string
}

// MakePlan loads the package with its tests, runs the regions analyzer on
// it and on the packages of the main module it imports, and collects the
// probes.
func MakePlan(opts PlanOptions) (*Plan, error) {
	defer children.Spawn()()
	pattern := opts.Pattern
	flags := TagFlags(opts.Tags)
	cfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Dir: opts.Dir, Tests: true, Context: opts.Context, BuildFlags: flags}
	// The go command's work directory goes in one of avcheck's, removed
	// whatever happens: a go command stopped by an interrupt may not
	// remove its own.
	work := opts.WorkDir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "avcheck-load-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(work)
	}
	cfg.Env = append(os.Environ(), "GOTMPDIR="+work)
	pkgs, err := packages.Load(cfg, pattern)
	if err == nil && opts.Context != nil {
		err = opts.Context.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", pattern, err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no package matches %s", pattern)
	}
	var mainMod string
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Main {
			mainMod = p.Module.Path
		}
	}
	rcfg := regions.DefaultConfig()
	if opts.MaxD > 0 {
		rcfg.MaxD = opts.MaxD
	}
	analyzer := regions.New(rcfg)
	// The checker keeps the Results of its roots only, so the packages of
	// the main module that the package imports are roots too: the access
	// that interferes with a region is often in another package.
	roots := append([]*packages.Package(nil), pkgs...)
	seen := make(map[string]bool)
	for _, p := range pkgs {
		seen[p.ID] = true
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if !seen[p.ID] && mainMod != "" && p.Module != nil && p.Module.Path == mainMod {
			seen[p.ID] = true
			roots = append(roots, p)
		}
	})
	graph, err := checker.Analyze([]*analysis.Analyzer{analyzer}, roots, nil)
	if err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", pattern, err)
	}
	plan := &Plan{
		Accesses:  make(map[Line][]AccessProbe),
		Gos:       make(map[Line]string),
		RegionAt:  make(map[Line][]int),
		LockNames: make(map[Line]string),
		Conds:     make(map[string][]int),
		Calls:     make(map[string][]int),
		Defers:    make(map[string][]int),
		CallSites: make(map[Line][]string),
		Funcs:     make(map[string][]FuncRange),
		Files:     make(map[string]bool),

		BuildFlags: flags,
	}
	for _, p := range pkgs {
		if p.Name == "main" {
			plan.Main = true
		}
		for _, f := range p.GoFiles {
			if strings.HasSuffix(f, "_test.go") {
				plan.HasTests = true
			}
		}
	}
	seenAccess := make(map[string]bool)
	seenRegion := make(map[string]bool)
	seenUnprobed := make(map[string]bool)
	var analysed []analysedPackage
	for act := range graph.All() {
		if act.Analyzer != analyzer || act.Err != nil || act.Result == nil {
			continue
		}
		p := act.Package
		if !act.IsRoot {
			continue
		}
		if strings.HasSuffix(p.PkgPath, ".test") {
			continue // the generated test main
		}
		plan.addFiles(p)
		plan.addFuncs(p.Fset, act.Result.(*regions.Result), seenAccess, seenRegion, seenUnprobed)
		analysed = append(analysed, analysedPackage{p.Fset, p.TypesSizes, act.Result.(*regions.Result)})
	}
	plan.pkgs = roots
	plan.shareIntents()
	plan.markAfterCalls(roots)
	plan.addKeeps(roots)
	plan.addGuards(analysed)
	plan.addConsts(analysed)
	plan.addCalls(analysed)
	return plan, nil
}

func (plan *Plan) addFiles(p *packages.Package) {
	for i, f := range p.Syntax {
		name := p.CompiledGoFiles[i]
		if plan.Files[name] {
			continue
		}
		plan.Files[name] = true
		var lines []int
		var funcs []FuncRange
		add := func(pos token.Pos) { lines = append(lines, p.Fset.Position(pos).Line) }
		addFunc := func(start token.Pos, body *ast.BlockStmt) {
			if body != nil {
				funcs = append(funcs, FuncRange{p.Fset.Position(start).Line, p.Fset.Position(body.Rbrace).Line})
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				addFunc(n.Pos(), n.Body)
			case *ast.FuncLit:
				addFunc(n.Pos(), n.Body)
			case *ast.IfStmt:
				add(n.Cond.Pos())
			case *ast.ForStmt:
				if n.Cond != nil {
					add(n.Cond.Pos())
				}
			case *ast.RangeStmt:
				add(n.Pos())
			case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				add(n.Pos())
			case *ast.BinaryExpr:
				if n.Op == token.LAND || n.Op == token.LOR {
					add(n.OpPos)
				}
			}
			return true
		})
		sort.Ints(lines)
		plan.Conds[name] = lines
		sort.Slice(funcs, func(i, j int) bool {
			if funcs[i].Start != funcs[j].Start {
				return funcs[i].Start < funcs[j].Start
			}
			return funcs[i].End < funcs[j].End
		})
		plan.Funcs[name] = funcs
	}
}

func (plan *Plan) addFuncs(fset *token.FileSet, res *regions.Result, seenAccess, seenRegion, seenUnprobed map[string]bool) {
	for _, f := range res.Funcs {
		fn := funcName(f.Fn)
		plan.addUnshared(fset, f, seenUnprobed)
		unsupported := func(a *regions.Access, detail string) {
			plan.Skipped++
			p := fset.Position(a.Pos)
			if !plan.Files[p.Filename] || seenUnprobed[p.String()] {
				return
			}
			seenUnprobed[p.String()] = true
			plan.Unprobed = append(plan.Unprobed, Unprobed{Spot: Spot{Line{p.Filename, p.Line}, p.Column}, Func: fn, Expr: a.Expr, Reason: ReasonUnsupported, Detail: detail})
		}
		for _, a := range f.Accesses {
			switch {
			case a.Via != "" || a.Sync && a.Atomic == "":
				// Recorded where they happen: in the callee, at the
				// sync package's methods.
				plan.Skipped++
				continue
			case !a.Path.Shared():
				plan.Skipped++
				continue
			case a.Expr == "":
				unsupported(a, "no source expression to evaluate")
				continue
			}
			expr := a.Expr
			if a.Atomic != "" {
				var ok bool
				if expr, ok = atomicTarget(expr); !ok {
					unsupported(a, "the target of the sync/atomic call is not known")
					continue
				}
			}
			pos := fset.Position(a.Pos)
			contents := mapContents(a)
			key := fmt.Sprintf("%s:%d:%d:%s:%v:%s:%s", pos.Filename, pos.Line, pos.Column, expr, a.Kind, a.Atomic, contents)
			if seenAccess[key] {
				continue
			}
			seenAccess[key] = true
			l := Line{pos.Filename, pos.Line}
			probe := AccessProbe{Expr: expr, Write: a.Kind == regions.Write, Col: pos.Column, Func: fn, Atomic: a.Atomic,
				Rechecks: a.Kind == regions.Read && a.Rechecks && a.Atomic == ""}
			probe.Map, probe.Key = mapElement(a)
			if contents != "" {
				probe.Map, probe.Contents = contents, true
			}
			if dst, src, str, ok := copyArgs(a); ok {
				if str && a.Kind == regions.Read {
					// The bytes of a string: no goroutine writes them.
					plan.Skipped++
					continue
				}
				probe.Elems, probe.Other = dst, src
				if a.Kind == regions.Read {
					probe.Elems, probe.Other = src, dst
				}
			}
			plan.Accesses[l] = append(plan.Accesses[l], probe)
		}
		for _, op := range f.SyncOps {
			if op.What != "go statement" {
				continue
			}
			pos := fset.Position(op.Pos)
			plan.Gos[Line{pos.Filename, pos.Line}] = fn
		}
		for _, c := range f.Calls {
			if c.Callee == nil || len(c.Args) == 0 || c.Args[0] == nil {
				continue
			}
			switch c.Callee.String() {
			case "(*sync.Mutex).Lock", "(*sync.RWMutex).Lock", "(*sync.RWMutex).RLock":
				pos := fset.Position(c.Instr.Pos())
				plan.LockNames[Line{pos.Filename, pos.Line}] = c.Args[0].String()
			}
		}
		for _, r := range f.Regions {
			b, e := fset.Position(r.Pos), fset.Position(r.End)
			key := fmt.Sprintf("%s:%d:%d", b.Filename, b.Line, e.Line)
			if seenRegion[key] || b.Filename != e.Filename {
				continue
			}
			seenRegion[key] = true
			id := len(plan.Regions) + 1
			rp := RegionProbe{
				ID: id, Kind: r.Kind.String(), Begin: Line{b.Filename, b.Line}, EndLine: e.Line,
				Func: fn, BeginCol: b.Column, Accesses: len(r.Accesses), Intent: r.Intent.Evidence,
			}
			if in := r.Intent; in.From != nil && in.To != nil {
				for i, a := range []*regions.Access{in.From, in.To} {
					pos := a.Pos
					if a.Via != "" && a.Instr != nil && a.Instr.Pos().IsValid() {
						// An access made inside a call is placed at the
						// call's parenthesis, where no access of the line
						// is: the predictors tell an access of the
						// evidence itself (its object) from a call's
						// (patIndex.outsideEvidence).
						pos = a.Instr.Pos()
					}
					p := fset.Position(pos)
					rp.Evidence[i] = Spot{Line{p.Filename, p.Line}, p.Column}
				}
			}
			plan.Regions = append(plan.Regions, rp)
			l := Line{b.Filename, b.Line}
			plan.RegionAt[l] = append(plan.RegionAt[l], id)
		}
	}
}

// shareIntents gives the regions of a function whose lines overlap the
// strongest intent among them. The recorder joins such regions into the
// one that opens first (a proximity region over two critical sections
// joins them), and that region's begin event states the intent of the
// whole: the value read and written back, rather than the first critical
// section's. A proposal (intent.None) takes no part: the recorder opens
// it apart, around the confirmed regions it contains
// (regions.nestProposals), and it gains no intent from them.
func (plan *Plan) shareIntents() {
	byFunc := make(map[string][]int)
	for i, rp := range plan.Regions {
		if !rp.Intent.Confirms() {
			continue
		}
		k := rp.Func + "\x00" + rp.Begin.File
		byFunc[k] = append(byFunc[k], i)
	}
	for _, idx := range byFunc {
		sort.Slice(idx, func(a, b int) bool { return plan.Regions[idx[a]].Begin.Line < plan.Regions[idx[b]].Begin.Line })
		for start := 0; start < len(idx); {
			end, last, best := start+1, plan.Regions[idx[start]].EndLine, idx[start]
			for ; end < len(idx) && plan.Regions[idx[end]].Begin.Line <= last; end++ {
				last = max(last, plan.Regions[idx[end]].EndLine)
				if stronger(plan.Regions[idx[end]].Intent, plan.Regions[best].Intent) {
					best = idx[end]
				}
			}
			for _, i := range idx[start:end] {
				plan.Regions[i].Intent, plan.Regions[i].Evidence = plan.Regions[best].Intent, plan.Regions[best].Evidence
			}
			start = end
		}
	}
}

// stronger reports whether evidence a says more of a region's intent
// than b: an annotation most, then a value that flows (written back,
// deciding an access, read with another or read back), then a critical
// section alone.
func stronger(a, b intent.Evidence) bool {
	rank := func(e intent.Evidence) int {
		switch e {
		case intent.Annotation:
			return 5
		case intent.WriteBack:
			return 4
		case intent.Branch:
			return 3
		case intent.ReadPair, intent.ReadBack:
			return 2
		case intent.CriticalSection:
			return 1
		}
		return 0
	}
	return rank(a) > rank(b)
}

// atomicTarget returns the variable that a sync/atomic call's expression
// operates on: the pointer argument's target for the functions
// (atomic.AddInt64(&s.n, 1) is s.n), the receiver for the methods of the
// typed atomics (s.calls.Add(1) is s.calls; the recorder dereferences it
// if it is a pointer).
func atomicTarget(call string) (string, bool) {
	e, err := parser.ParseExpr(call)
	if err != nil {
		return "", false
	}
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return "", false
	}
	sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	switch sel.Sel.Name {
	case "Load", "Store", "Add", "Swap", "CompareAndSwap", "And", "Or":
		return types.ExprString(sel.X), true
	}
	if len(c.Args) == 0 {
		return "", false
	}
	if u, ok := ast.Unparen(c.Args[0]).(*ast.UnaryExpr); ok && u.Op == token.AND {
		return types.ExprString(u.X), true
	}
	return "*(" + types.ExprString(c.Args[0]) + ")", true
}

// funcName names an SSA function as the trace's sites do: "pkg.F" or
// "(*pkg.T).M", with the package's path.
func funcName(fn *ssa.Function) string {
	if fn == nil {
		return ""
	}
	return fn.String()
}
