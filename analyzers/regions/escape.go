package regions

import (
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// Shared means reachable by another goroutine. A function's own variables
// and the objects it allocates are not, until they escape to another
// goroutine: captured by or passed to a go statement's function, sent on
// a channel, stored into shared state (a package-level variable, a field
// or element of a shared object), passed to a function whose Summary
// says it does one of these (Escapes), or captured by a function given to
// a callee that may keep it and run it later on another goroutine
// (time.AfterFunc, an http.HandleFunc, a registry: keepsFunc). From there
// on, in the order of the
// function's instructions, their accesses are shared: "built in this
// function" ends at the first escape. A function's result that is a
// fresh object (Summary.Fresh: a constructor's &T{}) is the caller's own
// object in the same way, until the caller lets it escape.

// sharedPath returns the path of the state v addresses or refers to, as
// pathOf does, and whether it is shared at instruction at: a function's
// own variable or object is shared once it has escaped.
func (fa *funcAnalysis) sharedPath(v ssa.Value, at ssa.Instruction) (Path, bool) {
	p, ok := fa.pathOf(v)
	if !ok {
		return p, false
	}
	p = fa.escapedAt(p, at)
	return p, p.Shared()
}

// escapedAt marks a path of a local root as shared (Root.Escaped) if the
// root has escaped by instruction at.
func (fa *funcAnalysis) escapedAt(p Path, at ssa.Instruction) Path {
	if p.Root.Kind != RootLocal || p.Root.Escaped {
		return p
	}
	root, ok := fa.locals[p.Root.ID]
	if !ok {
		return p
	}
	for _, e := range fa.escapePoints(root) {
		if e == at || Reaches(e, at) {
			p.Root.Escaped = true
			break
		}
	}
	return p
}

// escapePoints returns the instructions of the function at which the
// local value v (a variable, an allocated object, a fresh call result)
// becomes reachable by another goroutine.
func (fa *funcAnalysis) escapePoints(v ssa.Value) []ssa.Instruction {
	if pts, ok := fa.escapes[v]; ok {
		return pts
	}
	fa.escapes[v] = nil // a cycle through v adds nothing
	var pts []ssa.Instruction
	seen := map[ssa.Value]bool{}
	var follow func(x ssa.Value)
	follow = func(x ssa.Value) {
		if seen[x] || x.Referrers() == nil {
			return
		}
		seen[x] = true
		for _, ref := range *x.Referrers() {
			switch r := ref.(type) {
			case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Slice, *ssa.ChangeType, *ssa.Convert, *ssa.MakeInterface,
				*ssa.ChangeInterface, *ssa.SliceToArrayPointer, *ssa.Phi, *ssa.MakeClosure:
				// A part of x, x seen as another type, or a closure that
				// captures x: where it goes, x goes.
				follow(r.(ssa.Value))
			case *ssa.Store:
				if r.Val != x {
					continue
				}
				if cell, ok := r.Addr.(*ssa.Alloc); ok {
					// x kept in a local variable: follow the variable.
					follow(cell)
					for _, cr := range *cell.Referrers() {
						if load, ok := cr.(*ssa.UnOp); ok {
							follow(load)
						}
					}
					continue
				}
				if p, ok := fa.pathOf(r.Addr); ok {
					if p = fa.escapedAt(p, r); p.Shared() {
						pts = append(pts, r)
					} else if root, ok := fa.locals[p.Root.ID]; ok && root != v {
						// Stored into another object of the function's
						// own: x escapes with it.
						pts = append(pts, fa.escapePoints(root)...)
					}
				}
			case *ssa.MapUpdate:
				if r.Value != x && r.Key != x {
					continue
				}
				if p, ok := fa.pathOf(r.Map); ok && fa.escapedAt(p, r).Shared() {
					pts = append(pts, r)
				}
			case *ssa.Send:
				if r.X == x {
					pts = append(pts, r)
				}
			case *ssa.Select:
				for _, st := range r.States {
					if st.Send == x {
						pts = append(pts, r)
					}
				}
			case *ssa.Go:
				pts = append(pts, r)
			case *ssa.Call:
				c := r.Common()
				if b, ok := c.Value.(*ssa.Builtin); ok {
					if b.Name() == "append" {
						follow(r) // the new slice holds x
					}
					continue
				}
				if c.Value == x {
					continue // calling a closure runs it here
				}
				_, sum := fa.calleeSummary(c)
				if sum != nil {
					for _, i := range sum.Escapes {
						if i < len(c.Args) && c.Args[i] == x {
							pts = append(pts, r)
						}
					}
				}
				if _, fn := x.Type().Underlying().(*types.Signature); fn && keepsFunc(c, x, sum) {
					// A function given to a callee that may keep it
					// (time.AfterFunc, an http.HandleFunc, a registry):
					// it may run on another goroutine, with what it
					// captures.
					pts = append(pts, r)
				}
			}
		}
	}
	follow(v)
	fa.escapes[v] = pts
	return pts
}

// escapingParams returns the parameters of the function that it lets
// escape to another goroutine (Summary.Escapes).
func (fa *funcAnalysis) escapingParams() []int {
	var out []int
	for i, p := range fa.fn.Params {
		if mayRefer(p.Type()) && len(fa.escapePoints(p)) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// freshResults returns the results of the function that are, at every
// return, an object it allocated and did not let escape
// (Summary.Fresh): a constructor's.
func (fa *funcAnalysis) freshResults() []int {
	n := fa.fn.Signature.Results().Len()
	var out []int
	for i := range n {
		fresh, any := true, false
		for _, b := range fa.fn.Blocks {
			ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
			if !ok || i >= len(ret.Results) {
				continue
			}
			any = true
			if !fa.isFresh(ret.Results[i]) {
				fresh = false
			}
		}
		if fresh && any {
			out = append(out, i)
		}
	}
	return out
}

// isFresh reports whether v is an object the function allocated (or got
// fresh from a call) that has not escaped.
func (fa *funcAnalysis) isFresh(v ssa.Value) bool {
	switch x := v.(type) {
	case *ssa.Alloc:
		if !x.Heap {
			return false
		}
	case *ssa.MakeMap, *ssa.MakeChan, *ssa.MakeSlice:
	case *ssa.UnOp:
		a, ok := x.X.(*ssa.Alloc)
		if !ok {
			return false
		}
		s := onlyStored(a)
		return s != nil && fa.isFresh(s)
	case *ssa.Call, *ssa.Extract:
		if _, ok := fa.freshCall(v); !ok {
			return false
		}
	default:
		return false
	}
	p, ok := fa.pathOf(v)
	return ok && p.Root.Kind == RootLocal && len(fa.escapePoints(v)) == 0
}

// freshCall reports whether v is a result of a call that Summary.Fresh
// says is a new object, and names it for messages.
func (fa *funcAnalysis) freshCall(v ssa.Value) (string, bool) {
	var call *ssa.Call
	idx := 0
	switch x := v.(type) {
	case *ssa.Call:
		call = x
	case *ssa.Extract:
		c, ok := x.Tuple.(*ssa.Call)
		if !ok {
			return "", false
		}
		call, idx = c, x.Index
	default:
		return "", false
	}
	if !mayRefer(v.Type()) {
		return "", false
	}
	callee, sum := fa.calleeSummary(call.Common())
	if sum == nil {
		return "", false
	}
	for _, i := range sum.Fresh {
		if i == idx {
			return callee.Name() + "()", true
		}
	}
	return "", false
}

// mayRefer reports whether values of t can refer to other state: a
// pointer, map, slice, channel, function or interface.
func mayRefer(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Slice, *types.Chan, *types.Signature, *types.Interface:
		return true
	}
	return false
}

// keepsFunc reports whether the call c may keep the function x it is
// given, to run it later, on another goroutine. A function of the
// standard library does if it is one of asyncStd; its others call what
// they are given before they return (sort.Slice's less, Once.Do's f,
// strings.Map's mapping), or hand it back. Another callee does unless
// its Summary says it only calls x, in the caller's goroutine, before it
// returns (Callbacks); a callee with no Summary, or a call of an
// interface's method or of a function value, may keep it.
func keepsFunc(c *ssa.CallCommon, x ssa.Value, sum *Summary) bool {
	if callee := c.StaticCallee(); callee != nil && callee.Pkg != nil && isStd(callee.Pkg.Pkg.Path()) {
		if o := callee.Origin(); o != nil {
			callee = o
		}
		return asyncStd[callee.String()]
	}
	for i, a := range c.Args {
		if a == x && (sum == nil || !slices.Contains(sum.Callbacks, i)) {
			return true
		}
	}
	return false
}

// asyncStd are the functions of the standard library that run a function
// they are given on another goroutine, later.
var asyncStd = map[string]bool{
	"time.AfterFunc":                        true,
	"context.AfterFunc":                     true,
	"net/http.HandleFunc":                   true,
	"(*net/http.ServeMux).HandleFunc":       true,
	"runtime.SetFinalizer":                  true,
	"(*sync.WaitGroup).Go":                  true,
	"(*testing.B).RunParallel":              true,
	"(*net/http.Server).RegisterOnShutdown": true,
}
