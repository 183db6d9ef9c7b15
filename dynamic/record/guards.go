package record

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/proc"
	"golang.org/x/tools/go/ssa"
)

// Guards: the values a read may see without changing its goroutine's
// course.
//
// The precise stage lets a read see another value than the one it
// recorded when the recorder says which values keep everything the
// goroutine does next the same (trace.HasRange). Those are Fusion's
// guards g(t) and pi-functions (shared/seeds/001_af4533d3de4635d8.txt,
// section 4.2), restricted to what a run shows: the value a read loads
// (an integer, or the length of a slice or string) is followed through
// its function's SSA, and every use must be one of
//
//   - a comparison with a constant, or with an integer parameter that the
//     function never assigns, whose result only decides an if: the range
//     keeps its outcome;
//   - the value, through integer arithmetic, of a store that the plan
//     records as a write: the range may be anything;
//   - the index of an array whose element is then written by a recorded
//     store: the range keeps the index within the array;
//   - the function's result, where every call that the stop's caller
//     frame can be at compares it as in the first case (the caller's
//     comparisons then count too);
//
// through phi nodes and conversions between integer types (which keep
// the value when the range lies within both types). A read with any other
// use (an argument, a send, a map key, the address of another read, a
// comparison with something else, a loop counter) gets no guard, and the
// recorder records it as before.

// Guard says how a read's value is used, for the recorder to compute at
// each stop the range of values that keep the goroutine's course.
type Guard struct {
	// Len says the range is on the length of the slice or string read:
	// the recorder then records that length as the read's value.
	Len bool
	// Lo and Hi bound the range whatever the comparisons say: the types
	// the value passes through, and the bounds of an array it indexes.
	Lo, Hi int64
	// Cmps are the comparisons of the value in the read's own function.
	Cmps []GuardCmp
	// Returned says the function returns the value: a range needs the
	// caller's frame to be at one of Sites.
	Returned bool
	Sites    []GuardSite
}

// GuardCmp is a comparison "value Op K" whose outcome decides a branch.
type GuardCmp struct {
	Op token.Token // EQL, NEQ, LSS, LEQ, GTR or GEQ
	K  int64
	// Param, if not "", names the integer parameter K is: the recorder
	// evaluates it at the stop, in the frame of the comparison.
	Param string
}

// GuardSite is a call of the read's function whose result is compared.
type GuardSite struct {
	Func   string // the caller, as the plan names functions
	File   string
	Line   int
	Lo, Hi int64 // the types the result passes through there
	Cmps   []GuardCmp
}

// guardKey names a read probe: its position and expression.
type guardKey struct {
	line Line
	col  int
	expr string
}

// addGuards gives the plan's plain reads the guards of their loads, for
// the functions of the analysed packages. A probe that stands for two
// loads with different guards (two instantiations of a generic function)
// gets none.
func (plan *Plan) addGuards(analysed []analysedPackage) {
	var funcs []*ssa.Function
	stores := make(map[*ssa.Store]*regions.Access)
	type read struct {
		load  *ssa.UnOp
		key   guardKey
		sizes types.Sizes
	}
	var reads []read
	for _, ap := range analysed {
		for _, f := range ap.res.Funcs {
			funcs = append(funcs, f.Fn)
			for _, a := range f.Accesses {
				if a.Via != "" || a.Atomic != "" || a.Expr == "" {
					continue
				}
				switch in := a.Instr.(type) {
				case *ssa.Store:
					if a.Kind == regions.Write {
						stores[in] = a
					}
				case *ssa.UnOp:
					if a.Kind == regions.Read && in.Op == token.MUL {
						pos := ap.fset.Position(a.Pos)
						reads = append(reads, read{in, guardKey{Line{pos.Filename, pos.Line}, pos.Column, a.Expr}, ap.sizes})
					}
				}
			}
		}
	}
	fsetOf := make(map[*ssa.Function]*token.FileSet)
	for _, ap := range analysed {
		for _, f := range ap.res.Funcs {
			fsetOf[f.Fn] = ap.fset
		}
	}
	recorded := func(s *ssa.Store) bool {
		a := stores[s]
		if a == nil {
			return false
		}
		pos := fsetOf[s.Parent()].Position(a.Pos)
		k := guardKey{Line{pos.Filename, pos.Line}, pos.Column, a.Expr}
		return plan.probe(k, true) != nil
	}
	calls := newCallIndex(funcs)
	guards := make(map[guardKey]*Guard)
	conflict := make(map[guardKey]bool)
	for _, rd := range reads {
		if plan.probe(rd.key, false) == nil || conflict[rd.key] {
			continue
		}
		a := &guardAnalysis{fset: fsetOf[rd.load.Parent()], sizes: rd.sizes, recorded: recorded, calls: calls}
		g := a.guard(rd.load)
		if old, ok := guards[rd.key]; ok && g != nil {
			g = mergeGuards(old, g)
		}
		if g == nil {
			conflict[rd.key] = true
			delete(guards, rd.key)
			continue
		}
		guards[rd.key] = g
	}
	for k, g := range guards {
		plan.probe(k, false).Guard = g
	}
	// A store to an element at a variable index writes where the index
	// says: the precise stage needs to know that its address may vary.
	for s, a := range stores {
		if !addrVaries(s) {
			continue
		}
		pos := fsetOf[s.Parent()].Position(a.Pos)
		if p := plan.probe(guardKey{Line{pos.Filename, pos.Line}, pos.Column, a.Expr}, true); p != nil {
			p.AddrVaries = true
		}
	}
}

// addrVaries reports whether store s writes an array or slice element at
// an index that is not a constant.
func addrVaries(s *ssa.Store) bool {
	ia, ok := s.Addr.(*ssa.IndexAddr)
	if !ok {
		return false
	}
	_, fixed := ia.Index.(*ssa.Const)
	return !fixed
}

// mergeGuards returns the guard of a probe that stands for two loads with
// guards x and y, or nil if they differ. The loads are those of one
// function in two variants of its package (with and without its tests),
// whose calls differ: the sites of both count, but a site that the two
// see differently counts for neither.
func mergeGuards(x, y *Guard) *Guard {
	if x.Len != y.Len || x.Lo != y.Lo || x.Hi != y.Hi || !slices.Equal(x.Cmps, y.Cmps) || x.Returned != y.Returned {
		return nil
	}
	m := *x
	m.Sites = nil
	type at struct {
		fn, file string
		line     int
	}
	dropped := make(map[at]bool)
	for _, s := range slices.Concat(x.Sites, y.Sites) {
		k := at{s.Func, s.File, s.Line}
		i := slices.IndexFunc(m.Sites, func(t GuardSite) bool { return at{t.Func, t.File, t.Line} == k })
		switch {
		case dropped[k]:
		case i < 0:
			m.Sites = append(m.Sites, s)
		case !reflect.DeepEqual(m.Sites[i], s):
			dropped[k] = true
			m.Sites = slices.Delete(m.Sites, i, i+1)
		}
	}
	if m.Returned && len(m.Sites) == 0 {
		return nil
	}
	sortSites(m.Sites)
	return &m
}

// analysedPackage is what addGuards needs of one analysed package.
type analysedPackage struct {
	fset  *token.FileSet
	sizes types.Sizes
	res   *regions.Result
}

// probe returns the plain access probe of the plan at k, or nil.
func (plan *Plan) probe(k guardKey, write bool) *AccessProbe {
	ps := plan.Accesses[k.line]
	for i := range ps {
		if p := &ps[i]; p.Write == write && p.Col == k.col && p.Expr == k.expr && p.Atomic == "" {
			return p
		}
	}
	return nil
}

// callIndex holds the static calls of the analysed functions by callee.
type callIndex map[*ssa.Function][]*ssa.Call

func newCallIndex(funcs []*ssa.Function) callIndex {
	idx := make(callIndex)
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if c, ok := instr.(*ssa.Call); ok {
					if callee := c.Common().StaticCallee(); callee != nil {
						idx[callee] = append(idx[callee], c)
					}
				}
			}
		}
	}
	return idx
}

// guardAnalysis follows the uses of one load.
type guardAnalysis struct {
	fset     *token.FileSet
	sizes    types.Sizes
	recorded func(*ssa.Store) bool // whether the plan records a store as a write
	calls    callIndex

	fn       *ssa.Function // the function whose values are followed
	caller   bool          // following a call's result in a caller
	lo, hi   int64
	cmps     []GuardCmp
	returned int // the result index the value is returned at, -1 if none
	failed   bool
	seen     map[ssa.Value]uint8 // 1 followed as the value, 2 as derived from it
}

// guard returns the guard of a load, or nil if some use is unknown.
func (a *guardAnalysis) guard(load *ssa.UnOp) *Guard {
	a.fn = load.Parent()
	a.lo, a.hi, a.returned = math.MinInt64, math.MaxInt64, -1
	a.seen = make(map[ssa.Value]uint8)
	g := &Guard{}
	t := load.Type().Underlying()
	switch {
	case isInteger(t):
		a.narrow(t)
		a.exact(load)
	case isLenable(t):
		g.Len = true
		a.lo = 0
		lens := 0
		for _, u := range *load.Referrers() {
			switch u := u.(type) {
			case *ssa.DebugRef:
			case *ssa.Call:
				if b, ok := u.Call.Value.(*ssa.Builtin); ok && b.Name() == "len" && len(u.Call.Args) == 1 {
					lens++
					a.exact(u)
					continue
				}
				a.failed = true
			default:
				a.failed = true
			}
		}
		if lens == 0 {
			return nil
		}
	default:
		return nil
	}
	if a.failed {
		return nil
	}
	g.Lo, g.Hi, g.Cmps = a.lo, a.hi, sortCmps(a.cmps)
	if a.returned >= 0 {
		g.Returned = true
		g.Sites = a.sites(a.fn, a.returned)
		if len(g.Sites) == 0 {
			return nil
		}
	}
	return g
}

// narrow bounds the range to the values of the integer type t.
func (a *guardAnalysis) narrow(t types.Type) {
	lo, hi := intBounds(t, a.sizes)
	a.lo, a.hi = max(a.lo, lo), min(a.hi, hi)
}

// eachUse calls visit with each use of v but debug references, once per
// kind of following (bit, a bit of seen), until the analysis fails; a
// value whose uses are not known fails it.
func (a *guardAnalysis) eachUse(v ssa.Value, bit uint8, visit func(ssa.Instruction)) {
	if a.failed || a.seen[v]&bit != 0 {
		return
	}
	a.seen[v] |= bit
	refs := v.Referrers()
	if refs == nil {
		a.failed = true
		return
	}
	for _, u := range *refs {
		if a.failed {
			return
		}
		if _, debug := u.(*ssa.DebugRef); !debug {
			visit(u)
		}
	}
}

// exact follows the uses of a value equal to the read's (or to its
// length).
func (a *guardAnalysis) exact(v ssa.Value) {
	a.eachUse(v, 1, func(u ssa.Instruction) {
		switch u := u.(type) {
		case *ssa.BinOp:
			switch u.Op {
			case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				a.compare(v, u)
			default:
				a.arith(v, u)
			}
		case *ssa.Phi:
			a.exact(u)
		case *ssa.Convert, *ssa.ChangeType:
			t := u.(ssa.Value).Type().Underlying()
			if !isInteger(t) {
				a.failed = true
				return
			}
			a.narrow(t)
			a.exact(u.(ssa.Value))
		case *ssa.Store:
			if i, ok := resultSlot(u.Addr); ok && u.Val == v && !a.caller {
				a.returnAt(i)
				return
			}
			a.failed = a.caller || u.Val != v || !a.recorded(u)
		case *ssa.IndexAddr:
			a.index(v, u)
		case *ssa.Return:
			a.result(v, u)
		default:
			a.failed = true
		}
	})
}

// derived follows the uses of a value computed from the read's by
// arithmetic: it may only become the value of recorded writes.
func (a *guardAnalysis) derived(v ssa.Value) {
	a.eachUse(v, 2, func(u ssa.Instruction) {
		switch u := u.(type) {
		case *ssa.BinOp:
			a.arith(v, u)
		case *ssa.Phi:
			a.derived(u)
		case *ssa.Convert, *ssa.ChangeType:
			if !isInteger(u.(ssa.Value).Type().Underlying()) {
				a.failed = true
				return
			}
			a.derived(u.(ssa.Value))
		case *ssa.Store:
			a.failed = u.Val != v || !a.recorded(u)
		default:
			a.failed = true
		}
	})
}

// arith follows integer arithmetic on v. v may not be a divisor (a zero
// one panics) or a shift count (a negative one panics), and a comparison
// of the result is not analysed.
func (a *guardAnalysis) arith(v ssa.Value, u *ssa.BinOp) {
	if a.caller || !isInteger(u.Type().Underlying()) {
		a.failed = true
		return
	}
	switch u.Op {
	case token.ADD, token.SUB, token.MUL, token.AND, token.OR, token.XOR, token.AND_NOT:
	case token.QUO, token.REM, token.SHL, token.SHR:
		if u.Y == v {
			a.failed = true
			return
		}
	default:
		a.failed = true
		return
	}
	a.derived(u)
}

// compare records a comparison of v with a constant or an unassigned
// parameter, whose outcome only decides branches.
func (a *guardAnalysis) compare(v ssa.Value, u *ssa.BinOp) {
	op, other := u.Op, u.Y
	if u.Y == v {
		op, other = regions.FlipCmp(op), u.X
	}
	if other == v || !isInteger(v.Type().Underlying()) {
		a.failed = true
		return
	}
	c := GuardCmp{Op: op}
	switch k := other.(type) {
	case *ssa.Const:
		if k.Value == nil || k.Value.Kind() != constant.Int {
			a.failed = true
			return
		}
		n, exact := constant.Int64Val(k.Value)
		if !exact {
			a.failed = true
			return
		}
		c.K = n
	case *ssa.Parameter:
		if !a.stableParam(k) {
			a.failed = true
			return
		}
		c.Param = k.Name()
	default:
		a.failed = true
		return
	}
	refs := u.Referrers()
	if refs == nil {
		a.failed = true
		return
	}
	for _, r := range *refs {
		switch r.(type) {
		case *ssa.If, *ssa.DebugRef:
		default:
			a.failed = true
			return
		}
	}
	a.cmps = append(a.cmps, c)
}

// stableParam reports whether the debugger, stopped anywhere in the
// function, reads by its name the value parameter p had on entry: an
// integer that the function (its literals included) never assigns, takes
// the address of or declares another variable of the same name.
func (a *guardAnalysis) stableParam(p *ssa.Parameter) bool {
	if p.Parent() != a.fn || !isInteger(p.Type().Underlying()) {
		return false
	}
	name := p.Name()
	if name == "" || name == "_" || strings.ContainsAny(name, "$.") {
		return false
	}
	body := funcBody(a.fn.Syntax())
	if body == nil {
		return false
	}
	ok := true
	is := func(e ast.Expr) bool {
		id, isID := ast.Unparen(e).(*ast.Ident)
		return isID && id.Name == name
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			ok = ok && !slices.ContainsFunc(n.Lhs, is)
		case *ast.IncDecStmt:
			ok = ok && !is(n.X)
		case *ast.UnaryExpr:
			ok = ok && (n.Op != token.AND || !is(n.X))
		case *ast.ValueSpec:
			for _, id := range n.Names {
				ok = ok && id.Name != name
			}
		case *ast.RangeStmt:
			ok = ok && (n.Key == nil || !is(n.Key)) && (n.Value == nil || !is(n.Value))
		case *ast.Field:
			for _, id := range n.Names {
				ok = ok && id.Name != name
			}
		}
		return ok
	})
	return ok
}

// index accepts v as the index of an array whose element is only
// written, by recorded stores: the range keeps it within the array.
func (a *guardAnalysis) index(v ssa.Value, u *ssa.IndexAddr) {
	ptr, ok := u.X.Type().Underlying().(*types.Pointer)
	if !ok || a.caller || u.Index != v {
		a.failed = true
		return
	}
	arr, ok := ptr.Elem().Underlying().(*types.Array)
	if !ok || arr.Len() <= 0 {
		a.failed = true
		return
	}
	refs := u.Referrers()
	if refs == nil {
		a.failed = true
		return
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.DebugRef:
		case *ssa.Store:
			if r.Addr != u || !a.recorded(r) {
				a.failed = true
				return
			}
		default:
			a.failed = true
			return
		}
	}
	a.lo, a.hi = max(a.lo, 0), min(a.hi, arr.Len()-1)
}

// result accepts v as one result of the function.
func (a *guardAnalysis) result(v ssa.Value, u *ssa.Return) {
	if a.caller {
		a.failed = true
		return
	}
	for i, r := range u.Results {
		if r == v {
			a.returnAt(i)
		}
	}
}

// returnAt notes that the value is the function's result i; it may be
// only one of them.
func (a *guardAnalysis) returnAt(i int) {
	if a.returned >= 0 && a.returned != i {
		a.failed = true
		return
	}
	a.returned = i
}

// resultSlot reports whether addr is the local variable that a function
// with deferred calls keeps its result i in (SSA stores the result there
// before running the deferred calls, and returns what it then loads from
// it): a variable that nothing else reads and whose address goes nowhere
// else. A named result that a deferred closure could change is captured,
// and is not one.
func resultSlot(addr ssa.Value) (int, bool) {
	alloc, ok := addr.(*ssa.Alloc)
	if !ok || alloc.Heap {
		return 0, false
	}
	i := -1
	for _, u := range *alloc.Referrers() {
		switch u := u.(type) {
		case *ssa.DebugRef:
		case *ssa.Store:
			if u.Addr != alloc || u.Val == alloc {
				return 0, false
			}
		case *ssa.UnOp:
			if u.Op != token.MUL {
				return 0, false
			}
			for _, r := range *u.Referrers() {
				ret, ok := r.(*ssa.Return)
				if !ok {
					return 0, false
				}
				for j, res := range ret.Results {
					if res != u {
						continue
					}
					if i >= 0 && i != j {
						return 0, false
					}
					i = j
				}
			}
		default:
			return 0, false
		}
	}
	return i, i >= 0
}

// sites returns the calls of fn whose caller's frame, at the call's line,
// makes no other call that could reach fn, and whose result i only
// decides branches by comparisons: their comparisons and bounds.
func (a *guardAnalysis) sites(fn *ssa.Function, i int) []GuardSite {
	var out []GuardSite
	for _, call := range a.calls[fn] {
		caller := call.Parent()
		line, ok := a.callLine(call)
		if !ok || !a.onlyCall(caller, call, fn, line) {
			continue
		}
		var res ssa.Value = call
		if fn.Signature.Results().Len() != 1 {
			res = nil
			refs := call.Referrers()
			if refs == nil {
				continue
			}
			for _, r := range *refs {
				if x, ok := r.(*ssa.Extract); ok && x.Index == i && res == nil {
					res = x
				} else if ok && x.Index == i {
					res = nil
					break
				}
			}
			if res == nil {
				continue
			}
		}
		sub := &guardAnalysis{fset: a.fset, sizes: a.sizes, recorded: a.recorded, calls: a.calls,
			fn: caller, caller: true, lo: math.MinInt64, hi: math.MaxInt64, returned: -1, seen: make(map[ssa.Value]uint8)}
		sub.exact(res)
		if sub.failed {
			continue
		}
		pos := a.fset.Position(call.Pos())
		out = append(out, GuardSite{Func: funcName(caller), File: pos.Filename, Line: line,
			Lo: sub.lo, Hi: sub.hi, Cmps: sortCmps(sub.cmps)})
	}
	sortSites(out)
	return out
}

func sortSites(ss []GuardSite) {
	slices.SortFunc(ss, func(x, y GuardSite) int {
		if c := strings.Compare(x.File, y.File); c != 0 {
			return c
		}
		if x.Line != y.Line {
			return x.Line - y.Line
		}
		return strings.Compare(x.Func, y.Func)
	})
}

// callLine returns the line of a call written on one line, the line a
// debugger shows its caller's frame at during the call.
func (a *guardAnalysis) callLine(call *ssa.Call) (int, bool) {
	var body ast.Node
	switch s := call.Parent().Syntax().(type) {
	case *ast.FuncDecl:
		body = s.Body
	case *ast.FuncLit:
		body = s.Body
	}
	if body == nil || !call.Pos().IsValid() {
		return 0, false
	}
	var expr *ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && c.Lparen == call.Pos() {
			expr = c
		}
		return expr == nil
	})
	if expr == nil {
		return 0, false
	}
	first, last := a.fset.Position(expr.Pos()).Line, a.fset.Position(expr.End()).Line
	return first, first == last
}

// onlyCall reports whether call is the one call at line of caller that
// can reach fn with caller's frame at that line: no other static call of
// fn there, no dynamic call or method call through an interface there,
// and no deferred call in caller that could be fn (it would run at a
// return, which may be on that line).
func (a *guardAnalysis) onlyCall(caller *ssa.Function, call *ssa.Call, fn *ssa.Function, line int) bool {
	for _, b := range caller.Blocks {
		for _, instr := range b.Instrs {
			ci, ok := instr.(ssa.CallInstruction)
			if !ok || instr == call {
				continue
			}
			c := ci.Common()
			reach := c.IsInvoke()
			if !reach {
				switch c.StaticCallee() {
				case fn:
					reach = true
				case nil:
					_, builtin := c.Value.(*ssa.Builtin)
					reach = !builtin
				}
			}
			if !reach {
				continue
			}
			if _, deferred := instr.(*ssa.Defer); deferred {
				return false
			}
			if ci.Pos().IsValid() && a.fset.Position(ci.Pos()).Line == line {
				return false
			}
		}
	}
	return true
}

func sortCmps(cs []GuardCmp) []GuardCmp {
	slices.SortFunc(cs, func(x, y GuardCmp) int {
		switch {
		case x.Op != y.Op:
			return int(x.Op) - int(y.Op)
		case x.Param != y.Param:
			return strings.Compare(x.Param, y.Param)
		case x.K < y.K:
			return -1
		case x.K > y.K:
			return 1
		}
		return 0
	})
	return slices.Compact(cs)
}

func isInteger(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}

// isLenable reports whether t is a slice or a string, whose length is part
// of the value a read loads.
func isLenable(t types.Type) bool {
	switch t := t.(type) {
	case *types.Slice:
		return true
	case *types.Basic:
		return t.Info()&types.IsString != 0
	}
	return false
}

// intBounds returns the values of an integer type that an int64 holds.
func intBounds(t types.Type, sizes types.Sizes) (lo, hi int64) {
	b, ok := t.(*types.Basic)
	if !ok {
		return 0, -1
	}
	bits := int64(64)
	if sizes != nil {
		bits = 8 * sizes.Sizeof(b)
	}
	if b.Info()&types.IsUnsigned != 0 {
		if bits >= 64 {
			return 0, math.MaxInt64
		}
		return 0, 1<<bits - 1
	}
	if bits >= 64 {
		return math.MinInt64, math.MaxInt64
	}
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

// guardRange computes at a stop the range of a read with a guard: v is
// the value read (or its length); param evaluates a parameter in the
// read's frame (0) or its caller's (1); site is the caller's site when the
// guard's value is returned. It reports false when no range can be given.
func guardRange(g *Guard, v int64, site *GuardSite, param func(frame int, name string) (int64, bool)) (trace.Range, bool) {
	r := trace.Range{Lo: g.Lo, Hi: g.Hi}
	apply := func(frame int, cs []GuardCmp) bool {
		for _, c := range cs {
			k := c.K
			if c.Param != "" {
				var ok bool
				if k, ok = param(frame, c.Param); !ok {
					return false
				}
			}
			lo, hi := keep(c.Op, v, k)
			r.Lo, r.Hi = max(r.Lo, lo), min(r.Hi, hi)
		}
		return true
	}
	if !apply(0, g.Cmps) {
		return trace.Range{}, false
	}
	if g.Returned {
		if site == nil {
			return trace.Range{}, false
		}
		r.Lo, r.Hi = max(r.Lo, site.Lo), min(r.Hi, site.Hi)
		if !apply(1, site.Cmps) {
			return trace.Range{}, false
		}
	}
	return r, r.Contains(v)
}

// keep returns the interval of values x for which "x op k" has the
// outcome it has for v, on the side of k that v is on: it holds v.
func keep(op token.Token, v, k int64) (lo, hi int64) {
	const minI, maxI = math.MinInt64, math.MaxInt64
	switch {
	case v < k:
		// Every comparison has the same outcome below k.
		if op == token.LEQ || op == token.GTR {
			return minI, k
		}
		return minI, k - 1
	case v > k:
		if op == token.LSS || op == token.GEQ {
			return k, maxI
		}
		return k + 1, maxI
	}
	// v == k: only == and != fix the value; the others hold on a side.
	switch op {
	case token.LSS, token.GEQ: // false, true for every x >= k
		return k, maxI
	case token.GTR, token.LEQ: // false, true for every x <= k
		return minI, k
	}
	return k, k
}

// guardedRead gives the read e the range its probe's guard allows, if
// it can: v is the variable read, scope the read's frame.
func (r *recorder) guardedRead(e *trace.Event, g *Guard, v *proc.Variable, scope *proc.EvalScope, th proc.Thread, gr *proc.G, frames []proc.Stackframe) {
	val := int64(e.Value)
	isLen := e.Flags&trace.ValueIsLen != 0
	if g.Len {
		if e.Flags&trace.HasValue != 0 && !isLen || v.Unreadable != nil || v.Kind != reflect.Slice && v.Kind != reflect.String {
			return
		}
		val = v.Len
	} else if e.Flags&trace.HasValue == 0 || isLen {
		return
	}
	var site *GuardSite
	if g.Returned {
		if len(frames) < 2 || frames[1].Call.Fn == nil {
			return
		}
		c := frames[1].Call
		for i := range g.Sites {
			s := &g.Sites[i]
			if s.Line == c.Line && s.File == c.File && sameFunc(s.Func, c.Fn.Name) {
				site = s
				break
			}
		}
		if site == nil {
			return
		}
	}
	var callerScope *proc.EvalScope
	param := func(frame int, name string) (int64, bool) {
		sc := scope
		if frame == 1 {
			if callerScope == nil {
				callerScope = proc.FrameToScope(r.tgt, th.ProcessMemory(), gr, th.ThreadID(), frames[1:]...)
			}
			sc = callerScope
		}
		pv, err := sc.EvalExpression(name, loadScalar)
		if err != nil {
			return 0, false
		}
		return signedScalar(pv)
	}
	rg, ok := guardRange(g, val, site, param)
	if !ok {
		return
	}
	ev := *e
	if g.Len {
		ev.Value, ev.Flags = uint64(val), ev.Flags|trace.HasValue|trace.ValueIsLen
	}
	if ev.SetRange(rg) {
		*e = ev
	}
}

// signedScalar returns an integer variable's value as an int64, if it
// holds it.
func signedScalar(v *proc.Variable) (int64, bool) {
	n, ok := scalar(v)
	if !ok {
		return 0, false
	}
	switch v.Kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int64(n), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int64(n), n <= math.MaxInt64
	}
	return 0, false
}

// sameFunc reports whether a function the plan names (its SSA name) is
// the function the binary names rt.
func sameFunc(plan, rt string) bool {
	name, ok := runtimeFuncName(plan)
	return ok && strings.HasSuffix(name, "."+withoutPackage(rt))
}
