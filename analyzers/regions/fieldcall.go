package regions

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// A type often keeps a callback in an unexported field of function type
// and calls it from its own methods, with its lock held:
//
//	rows.cancel = func() { d.close(rows.lasterr) } // runs with closemu held
//	...
//	rs.closemu.Lock()
//	if rs.cancel != nil { rs.cancel() }
//
// The closure's callers are then those calls: every call of the field in
// the package, on whatever value of the type. When the closure captures
// the value whose field it is stored in, a lock of that value held at
// every call is held in the closure. A callback that chains the one it
// replaces (parent := rows.cancel; rows.cancel = func() { ...; parent() })
// calls the field too, from inside itself; that call runs with the
// closure's own locks, so it does not count against them.
//
// This holds only while the package sees every call of the field: it is
// unexported, and each value read from it is only called, compared with
// nil, or captured by a closure that only calls or compares it.

// fieldCaller is one call of a function-typed field.
type fieldCaller struct {
	from *Func
	held []Held
	// recv is the path, in from, of the value whose field is called, if
	// it has one.
	recv *Path
}

// fieldCallbacks returns, for each closure stored in such a field, the
// calls of the field as its callers, with Bindings giving the path of
// the value the closure was stored in for each variable that captures it.
func fieldCallbacks(res *Result, inTest func(token.Pos) bool) map[*ssa.Function][]caller {
	type store struct {
		mc  *ssa.MakeClosure
		obj ssa.Value // the value whose field is written
	}
	stores := map[*types.Var][]store{}
	calls := map[*types.Var][]fieldCaller{}
	open := map[*types.Var]bool{}

	dyn := map[*ssa.Call][]Held{}
	reads := map[ssa.Instruction]*Access{}
	for _, f := range res.Funcs {
		for _, c := range f.DynCalls {
			dyn[c.Instr] = c.Held
		}
		for _, a := range f.Accesses {
			if a.Kind == Read && a.Via == "" {
				reads[a.Instr] = a
			}
		}
	}
	// recvOf returns the path of fa.X, from the access that reads the field.
	recvOf := func(load *ssa.UnOp) *Path {
		a := reads[load]
		if a == nil || len(a.Path.Fields) == 0 {
			return nil
		}
		p := Path{Root: a.Path.Root, Fields: slices.Clone(a.Path.Fields[:len(a.Path.Fields)-1])}
		return &p
	}
	// calledOnly reports whether every use of v, a value read from the
	// field, is a call of it or a comparison, adding the calls to the
	// field's callers. It follows v into a local variable and into the
	// closures that capture it. obj is the value whose field was read, as
	// seen where v is, and recv its path there (nil if unknown).
	var calledOnly, cellOnly func(v ssa.Value, field *types.Var, obj ssa.Value, recv *Path) bool
	calledOnly = func(v ssa.Value, field *types.Var, obj ssa.Value, recv *Path) bool {
		refs := v.Referrers()
		if refs == nil {
			return false
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.Call:
				if r.Call.Value != v || slices.Contains(r.Call.Args, v) {
					return false
				}
				from := res.ByFunc[r.Parent()]
				held, ok := dyn[r]
				if from == nil || !ok {
					return false
				}
				if !inTest(r.Pos()) {
					calls[field] = append(calls[field], fieldCaller{from: from, held: held, recv: recv})
				}
			case *ssa.BinOp:
			case *ssa.Store:
				// Kept in a local variable (one a closure captures).
				cell, ok := r.Addr.(*ssa.Alloc)
				if !ok || r.Val != v || !cellOnly(cell, field, obj, recv) {
					return false
				}
			case *ssa.MakeClosure:
				if !intoClosure(r, v, field, obj, calledOnly) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	// cellOnly is calledOnly for a variable holding the value: it may be
	// stored to, and what is loaded from it must be only called.
	cellOnly = func(cell ssa.Value, field *types.Var, obj ssa.Value, recv *Path) bool {
		refs := cell.Referrers()
		if refs == nil {
			return false
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.Store:
				if r.Addr != cell {
					return false
				}
			case *ssa.UnOp:
				if r.Op != token.MUL || !calledOnly(r, field, obj, recv) {
					return false
				}
			case *ssa.MakeClosure:
				if !intoClosure(r, cell, field, obj, cellOnly) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}

	for _, f := range res.Funcs {
		for _, b := range f.Fn.Blocks {
			for _, instr := range b.Instrs {
				fa, ok := instr.(*ssa.FieldAddr)
				if !ok {
					continue
				}
				field := FieldOf(fa)
				if field == nil || open[field] {
					continue
				}
				if _, isFunc := field.Type().Underlying().(*types.Signature); !isFunc || field.Exported() {
					continue
				}
				for _, r := range *fa.Referrers() {
					switch r := r.(type) {
					case *ssa.Store:
						if r.Addr != fa {
							open[field] = true
						} else if mc, ok := r.Val.(*ssa.MakeClosure); ok {
							stores[field] = append(stores[field], store{mc: mc, obj: fa.X})
						}
					case *ssa.UnOp:
						if r.Op != token.MUL || !calledOnly(r, field, fa.X, recvOf(r)) {
							open[field] = true
						}
					default:
						open[field] = true
					}
				}
			}
		}
	}

	out := map[*ssa.Function][]caller{}
	for field, ss := range stores {
		if open[field] || len(calls[field]) == 0 {
			continue
		}
		for _, s := range ss {
			fn, _ := s.mc.Fn.(*ssa.Function)
			if fn == nil || !storedOnly(s.mc) {
				continue
			}
			j := slices.IndexFunc(s.mc.Bindings, func(x ssa.Value) bool { return captures(x, s.obj) })
			for _, c := range calls[field] {
				if c.from.Fn == fn {
					continue // a chained call, made with fn's own locks
				}
				bindings := make([]*Path, len(fn.FreeVars))
				if j >= 0 {
					bindings[j] = c.recv
				}
				out[fn] = append(out[fn], caller{from: c.from, call: Call{Held: c.held, Bindings: bindings}})
			}
		}
	}
	return out
}

// intoClosure applies check to each variable of the closure mc that
// captures v, with the variable that captures obj, if one does, as the
// value whose field was read.
func intoClosure(mc *ssa.MakeClosure, v ssa.Value, field *types.Var, obj ssa.Value,
	check func(v ssa.Value, field *types.Var, obj ssa.Value, recv *Path) bool,
) bool {
	fn, _ := mc.Fn.(*ssa.Function)
	if fn == nil {
		return false
	}
	var inner ssa.Value
	var recv *Path
	if j := slices.IndexFunc(mc.Bindings, func(x ssa.Value) bool { return captures(x, obj) }); j >= 0 {
		inner = fn.FreeVars[j]
		recv = &Path{Root: Root{Kind: RootFree, Index: j, Name: fn.FreeVars[j].Name()}}
	}
	for i, b := range mc.Bindings {
		if b == v && !check(fn.FreeVars[i], field, inner, recv) {
			return false
		}
	}
	return true
}

// captures reports whether a closure's binding captures the variable v
// is: v itself, or the variable that v was loaded from (go/ssa keeps a
// captured variable in a cell, and the function reads it from there).
func captures(binding, v ssa.Value) bool {
	if v == nil {
		return false
	}
	if binding == v {
		return true
	}
	u, ok := v.(*ssa.UnOp)
	return ok && u.Op == token.MUL && u.X == binding
}

// storedOnly reports whether a closure value's one use is the store that
// puts it in a field.
func storedOnly(mc *ssa.MakeClosure) bool {
	refs := mc.Referrers()
	if refs == nil || len(*refs) != 1 {
		return false
	}
	_, ok := (*refs)[0].(*ssa.Store)
	return ok
}

// FieldOf returns the field that fa addresses.
func FieldOf(fa *ssa.FieldAddr) *types.Var {
	ptr, ok := fa.X.Type().Underlying().(*types.Pointer)
	if !ok {
		return nil
	}
	st, ok := ptr.Elem().Underlying().(*types.Struct)
	if !ok || fa.Field >= st.NumFields() {
		return nil
	}
	return st.Field(fa.Field)
}
