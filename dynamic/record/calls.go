package record

import (
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/ssa"
)

// Calls that may branch on a value read.
//
// The precise stage lets a read see another value than the one it
// recorded only when no later event of its goroutine comes after a taken
// conditional branch (trace.Event.Branches, the guard g(t) of Fusion,
// shared/seeds/001_af4533d3de4635d8.txt, section 4.2). A branch on the
// value need not be in the function that read it: the value may be
// passed to a function that tests it (check(b - n), where check panics on
// a negative value) and that has no stop of its own, so the recorder
// never sees its lines. The plan therefore lists, per file, the lines of
// the calls that may branch on a value read (Plan.Calls), which the
// recorder counts as branches as it counts Plan.Conds: a call whose callee
// may branch and one of whose operands (arguments, receiver, the
// variables a function literal captures, the arguments of a go or defer
// statement) may carry a value loaded from memory.
//
// A callee may branch unless it is a function of the analysed packages
// whose SSA, and that of every function it calls, transitively, has no
// conditional jump (an if, a for's condition, a range over a map or a
// channel and a type switch all become one) and no select. A call through
// an interface or a function value, and a call of a function outside the
// analysed packages, may branch. Builtins (len, append, copy, ...) are not
// calls here.
//
// An operand carries a loaded value when it is data-dependent on a load
// (the value of a variable, a field or an element), a call's result, a
// receive, a map lookup or a range's next element. Parameters, constants
// and addresses do not: a pointer, map, channel or function passed on
// lets the callee read through it, and those reads are accesses of the
// callee's own, recorded at their own stops (a.mu.Unlock() passes the
// address of a.mu, nothing read). A local variable passed by address or
// captured counts as loaded when a loaded value is stored into it.

// mayBranchFuncs computes, for the functions of the analysed packages,
// whether each may branch, through its static callees. Functions are
// named by their SSA names (generic instances by their origin's), so that
// a call into another analysed package, whose SSA is another program's,
// finds the callee's body.
type mayBranchFuncs struct {
	bodies map[string][]*ssa.Function
	result map[string]bool
}

func funcKey(fn *ssa.Function) string {
	if o := fn.Origin(); o != nil {
		fn = o
	}
	return fn.String()
}

// newMayBranch computes the answer for funcs and, transitively, for the
// synthetic functions with bodies they call (wrappers of promoted
// methods, bound methods).
func newMayBranch(funcs []*ssa.Function) *mayBranchFuncs {
	m := &mayBranchFuncs{bodies: make(map[string][]*ssa.Function), result: make(map[string]bool)}
	queue := append([]*ssa.Function(nil), funcs...)
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		k := funcKey(fn)
		if fn.Blocks == nil || containsFunc(m.bodies[k], fn) {
			continue
		}
		m.bodies[k] = append(m.bodies[k], fn)
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				if c, ok := instr.(ssa.CallInstruction); ok {
					if callee := c.Common().StaticCallee(); callee != nil && callee.Synthetic != "" && callee.Blocks != nil {
						queue = append(queue, callee)
					}
				}
			}
		}
	}
	// Each function's own jumps and calls, then the least fixpoint of
	// "may branch" over the static calls (recursion included).
	local := make(map[string]bool)
	callees := make(map[string][]string)
	for k, fns := range m.bodies {
		for _, fn := range fns {
			for _, b := range fn.Blocks {
				for _, instr := range b.Instrs {
					switch in := instr.(type) {
					case *ssa.If, *ssa.Select:
						local[k] = true
					case ssa.CallInstruction:
						cc := in.Common()
						if _, ok := cc.Value.(*ssa.Builtin); ok {
							continue
						}
						callee := cc.StaticCallee()
						if callee == nil {
							local[k] = true
							continue
						}
						ck := funcKey(callee)
						if _, known := m.bodies[ck]; !known {
							local[k] = true
							continue
						}
						callees[k] = append(callees[k], ck)
					}
				}
			}
		}
	}
	for k := range m.bodies {
		m.result[k] = local[k]
	}
	for changed := true; changed; {
		changed = false
		for k, cs := range callees {
			if m.result[k] {
				continue
			}
			for _, c := range cs {
				if m.result[c] {
					m.result[k] = true
					changed = true
					break
				}
			}
		}
	}
	return m
}

func containsFunc(fns []*ssa.Function, fn *ssa.Function) bool {
	for _, f := range fns {
		if f == fn {
			return true
		}
	}
	return false
}

// mayBranch reports whether a call may branch: false only for a static
// call of a function known not to.
func (m *mayBranchFuncs) mayBranch(c *ssa.CallCommon) bool {
	callee := c.StaticCallee()
	if callee == nil {
		return true
	}
	r, known := m.result[funcKey(callee)]
	return !known || r
}

// branchingCall reports whether call instruction c counts as a branch:
// not a builtin, its callee may branch, and an operand may carry a loaded
// value.
func (m *mayBranchFuncs) branchingCall(c ssa.CallInstruction) bool {
	cc := c.Common()
	if _, ok := cc.Value.(*ssa.Builtin); ok {
		return false
	}
	if !m.mayBranch(cc) {
		return false
	}
	l := loadedValues{seen: make(map[ssa.Value]bool)}
	if cc.IsInvoke() && l.loaded(cc.Value) {
		return true
	}
	if mc, ok := cc.Value.(*ssa.MakeClosure); ok {
		for _, b := range mc.Bindings {
			if l.loaded(b) {
				return true
			}
		}
	}
	for _, a := range cc.Args {
		if l.loaded(a) {
			return true
		}
	}
	return false
}

// loadedValues decides whether values may carry a value loaded from
// memory, memoised over one call's operands.
type loadedValues struct {
	seen map[ssa.Value]bool
}

// isAddress reports whether a type is one whose values only let the
// callee reach memory: a pointer, map, channel or function.
func isAddress(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Chan, *types.Signature:
		return true
	case *types.Basic:
		return t.Underlying().(*types.Basic).Kind() == types.UnsafePointer
	}
	return false
}

func (l *loadedValues) loaded(v ssa.Value) bool {
	if isAddress(v.Type()) {
		if a, ok := v.(*ssa.Alloc); ok {
			return l.storedInto(a)
		}
		return false
	}
	return l.value(v)
}

// value reports whether v, of any type, is data-dependent on a loaded
// value. A value met again (a phi's cycle) adds nothing.
func (l *loadedValues) value(v ssa.Value) bool {
	if r, ok := l.seen[v]; ok {
		return r
	}
	l.seen[v] = false
	r := l.compute(v)
	l.seen[v] = r
	return r
}

func (l *loadedValues) compute(v ssa.Value) bool {
	switch v := v.(type) {
	case *ssa.Const, *ssa.Parameter, *ssa.Global, *ssa.Function, *ssa.Builtin,
		*ssa.MakeMap, *ssa.MakeChan, *ssa.MakeSlice:
		return false
	case *ssa.FreeVar:
		// A captured variable is an address; a captured value may have
		// been loaded by the enclosing function.
		return !isAddress(v.Type())
	case *ssa.Alloc:
		return l.storedInto(v)
	case *ssa.UnOp:
		if v.Op == token.MUL || v.Op == token.ARROW {
			return true
		}
		return l.value(v.X)
	case *ssa.BinOp:
		return l.value(v.X) || l.value(v.Y)
	case *ssa.Call:
		if _, ok := v.Call.Value.(*ssa.Builtin); ok {
			// len(s), append(s, x), ...: the operands'.
			for _, a := range v.Call.Args {
				if l.value(a) {
					return true
				}
			}
			return false
		}
		return true
	case *ssa.Lookup:
		if _, ok := v.X.Type().Underlying().(*types.Map); ok {
			return true
		}
		return l.value(v.X) || l.value(v.Index)
	case *ssa.Next, *ssa.Select:
		return true
	case *ssa.Extract:
		return l.value(v.Tuple)
	case *ssa.Field:
		return l.value(v.X)
	case *ssa.Index:
		return l.value(v.X) || l.value(v.Index)
	case *ssa.FieldAddr:
		return l.value(v.X)
	case *ssa.IndexAddr:
		return l.value(v.X) || l.value(v.Index)
	case *ssa.Slice:
		return l.value(v.X) || v.Low != nil && l.value(v.Low) || v.High != nil && l.value(v.High) || v.Max != nil && l.value(v.Max)
	case *ssa.Convert:
		return l.value(v.X)
	case *ssa.ChangeType:
		return l.value(v.X)
	case *ssa.MultiConvert:
		return l.value(v.X)
	case *ssa.ChangeInterface:
		return l.value(v.X)
	case *ssa.MakeInterface:
		return l.loaded(v.X)
	case *ssa.SliceToArrayPointer:
		return l.value(v.X)
	case *ssa.TypeAssert:
		return l.value(v.X)
	case *ssa.Phi:
		for _, e := range v.Edges {
			if l.value(e) {
				return true
			}
		}
		return false
	case *ssa.MakeClosure:
		for _, b := range v.Bindings {
			if l.value(b) {
				return true
			}
		}
		return false
	}
	return true // unknown: conservatively loaded
}

// storedInto reports whether a loaded value is stored into a local
// variable, or into a field or element of it.
func (l *loadedValues) storedInto(a *ssa.Alloc) bool {
	refs := a.Referrers()
	if refs == nil {
		return false
	}
	check := func(addr ssa.Value, in ssa.Instruction) bool {
		s, ok := in.(*ssa.Store)
		return ok && s.Addr == addr && l.value(s.Val)
	}
	for _, in := range *refs {
		if check(a, in) {
			return true
		}
		var sub ssa.Value
		switch x := in.(type) {
		case *ssa.FieldAddr:
			sub = x
		case *ssa.IndexAddr:
			sub = x
		default:
			continue
		}
		if srefs := sub.Referrers(); srefs != nil {
			for _, in2 := range *srefs {
				if check(sub, in2) {
					return true
				}
			}
		}
	}
	return false
}

// addCalls lists in plan.Calls, per file, the lines of the calls of the
// analysed functions that may branch on a loaded value, in
// plan.CallSites their callees, and in plan.Defers the lines of those
// that are deferred.
func (plan *Plan) addCalls(analysed []analysedPackage) {
	var funcs []*ssa.Function
	fsetOf := make(map[*ssa.Function]*token.FileSet)
	for _, ap := range analysed {
		for _, f := range ap.res.Funcs {
			funcs = append(funcs, f.Fn)
			fsetOf[f.Fn] = ap.fset
		}
	}
	m := newMayBranch(funcs)
	calls := make(map[string]map[int]bool)
	defers := make(map[string]map[int]bool)
	seen := make(map[token.Position]bool)
	add := func(set map[string]map[int]bool, pos token.Position) {
		if set[pos.Filename] == nil {
			set[pos.Filename] = make(map[int]bool)
		}
		set[pos.Filename][pos.Line] = true
	}
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				c, ok := instr.(ssa.CallInstruction)
				if !ok || !c.Pos().IsValid() || !m.branchingCall(c) {
					continue
				}
				pos := fsetOf[fn].Position(c.Pos())
				if !plan.Files[pos.Filename] {
					continue
				}
				add(calls, pos)
				// A package and its test variant are both analysed:
				// one site per position.
				if seen[pos] {
					continue
				}
				seen[pos] = true
				l := Line{pos.Filename, pos.Line}
				plan.CallSites[l] = append(plan.CallSites[l], calleeName(c))
				if _, ok := c.(*ssa.Defer); ok {
					add(defers, pos)
				}
			}
		}
	}
	sorted := func(set map[string]map[int]bool) map[string][]int {
		out := make(map[string][]int, len(set))
		for f, lines := range set {
			for l := range lines {
				out[f] = append(out[f], l)
			}
			sort.Ints(out[f])
		}
		return out
	}
	plan.Calls = sorted(calls)
	plan.Defers = sorted(defers)
}

// calleeName names the callee of a call as a frame of the binary does,
// without its package (withoutPackage), for callLine to tell it; "" for a
// call that is not static, a go or defer statement, or a callee whose
// name does not map.
func calleeName(c ssa.CallInstruction) string {
	if _, ok := c.(*ssa.Call); !ok {
		return ""
	}
	callee := c.Common().StaticCallee()
	if callee == nil {
		return ""
	}
	rt, ok := runtimeFuncName(callee.String())
	if !ok {
		return ""
	}
	return withoutPackage(rt)
}

// callLine returns 1 if the line of file holds a call that may branch on
// a loaded value other than one call of the function named except (as
// calleeName names it; "" excepts nothing), else 0. The excepted call is
// one whose callee's frame the recorder saw: the callee's own branch
// lines are counted instead.
func (plan *Plan) callLine(file string, line int, except string) int {
	sites := plan.CallSites[Line{file, line}]
	if len(sites) == 0 || len(sites) == 1 && except != "" && sites[0] == except {
		return 0
	}
	return 1
}

// FuncRange is the extent of a function's source: the line of its func
// keyword to that of its body's closing brace.
type FuncRange struct {
	Start, End int
}

// funcAt returns the extent of the function of file whose code holds
// line: the one that starts at entry (the line the binary gives the
// function's entry) if any, else the innermost. ok is false if no
// function holds the line.
func (plan *Plan) funcAt(file string, line, entry int) (FuncRange, bool) {
	var atEntry, inner FuncRange
	foundEntry, found := false, false
	for _, fr := range plan.Funcs[file] {
		if fr.Start > line {
			break
		}
		if line > fr.End {
			continue
		}
		if fr.Start == entry && (!foundEntry || fr.End > atEntry.End) {
			atEntry, foundEntry = fr, true
		}
		// Sorted by start: a later start that holds the line is nested
		// in the earlier ones; of two on one line, the longer.
		if !found || fr.Start > inner.Start || fr.End > inner.End {
			inner, found = fr, true
		}
	}
	if foundEntry {
		return atEntry, true
	}
	return inner, found
}

// countLines returns how many of the sorted lines lie in [from, to).
func countLines(lines []int, from, to int) int {
	if to <= from {
		return 0
	}
	return sort.SearchInts(lines, to) - sort.SearchInts(lines, from)
}

// branchLines returns the branches the plan lists in [from, to) of file:
// its conditional branches and its lines of calls that may branch on a
// loaded value.
func (plan *Plan) branchLines(file string, from, to int) int {
	return countLines(plan.Conds[file], from, to) + countLines(plan.Calls[file], from, to)
}
