package atomicact

import (
	"go/token"
	"go/types"
	"slices"

	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/ssa"
)

// A type's field is often accessed atomically in one instance, the live
// one an object points to, and plainly in copies of it:
//
//	type Meter struct{ snapshot *MeterSnapshot }
//	func (m *Meter) Mark(n int64) { atomic.AddInt64(&m.snapshot.count, n) }
//	func (m *Meter) Snapshot() *MeterSnapshot {
//		return &MeterSnapshot{count: atomic.LoadInt64(&m.snapshot.count)}
//	}
//	func (s *MeterSnapshot) Count() int64 { return s.count } // a copy's
//
// When every atomic access of the field reaches it through one
// unexported pointer field (its home, Meter.snapshot), and the package
// uses what it reads from that field only to reach the pointee's fields
// (never passing, returning or storing it, nor calling a method on it),
// the atomically accessed instances are those the home points to, and a
// plain access through anything else is of another instance.

// homes finds the home of each variable the package accesses atomically
// through one, by the variable.
func homes(res *regions.Result) map[*types.Var]*types.Var {
	home := map[*types.Var]*types.Var{}
	bad := map[*types.Var]bool{}
	for _, f := range res.Funcs {
		for _, a := range f.Accesses {
			if a.Atomic == "" || a.Via != "" || a.Var == nil || bad[a.Var] {
				continue
			}
			h := homeOf(atomicAddr(a))
			if h == nil || home[a.Var] != nil && home[a.Var] != h {
				bad[a.Var] = true
				delete(home, a.Var)
				continue
			}
			home[a.Var] = h
		}
	}
	closed := map[*types.Var]bool{}
	for _, h := range home {
		closed[h] = !h.Exported()
	}
	for _, f := range res.Funcs {
		for _, b := range f.Fn.Blocks {
			for _, instr := range b.Instrs {
				fa, ok := instr.(*ssa.FieldAddr)
				if !ok {
					continue
				}
				h := regions.FieldOf(fa)
				if !closed[h] {
					continue
				}
				for _, r := range *fa.Referrers() {
					switch r := r.(type) {
					case *ssa.Store:
						if r.Addr != fa {
							closed[h] = false
						}
					case *ssa.UnOp:
						if r.Op != token.MUL || !onlyFields(r) {
							closed[h] = false
						}
					default:
						closed[h] = false
					}
				}
			}
		}
	}
	for v, h := range home {
		if !closed[h] {
			delete(home, v)
		}
	}
	return home
}

// atHome reports whether the plain access a may be of an instance that
// home points to: it reaches its variable through a read of home, or
// through something else that homes does not follow.
func atHome(a *regions.Access, home *types.Var) bool {
	addr := plainAddr(a)
	if addr == nil {
		return true
	}
	if h := homeOf(addr); h != nil {
		return h == home
	}
	fa, ok := addr.(*ssa.FieldAddr)
	if !ok {
		return true
	}
	switch x := fa.X.(type) {
	case *ssa.Parameter:
		// The home's pointees reach no parameter: only their fields
		// are taken.
		return false
	case *ssa.Alloc:
		// A new value is the home's if it is stored there.
		for _, r := range *x.Referrers() {
			if st, ok := r.(*ssa.Store); ok && st.Val == x {
				if to, ok := st.Addr.(*ssa.FieldAddr); ok && regions.FieldOf(to) == home {
					return true
				}
			}
		}
		return false
	}
	return true
}

// plainAddr returns the address a plain access loads from or stores
// to, nil for another kind of access.
func plainAddr(a *regions.Access) ssa.Value {
	switch in := a.Instr.(type) {
	case *ssa.UnOp:
		return in.X
	case *ssa.Store:
		return in.Addr
	}
	return nil
}

// atomicAddr returns the address an atomic access passes to its
// sync/atomic function, if it is a call of one.
func atomicAddr(a *regions.Access) ssa.Value {
	c, ok := a.Instr.(*ssa.Call)
	if !ok || len(c.Call.Args) == 0 {
		return nil
	}
	return c.Call.Args[0]
}

// homeOf returns F for an address &x.F.v, where x.F is a pointer field:
// the field that the pointer to v's struct was read from.
func homeOf(addr ssa.Value) *types.Var {
	fa, ok := addr.(*ssa.FieldAddr)
	if !ok {
		return nil
	}
	load, ok := fa.X.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return nil
	}
	outer, ok := load.X.(*ssa.FieldAddr)
	if !ok {
		return nil
	}
	h := regions.FieldOf(outer)
	if h == nil {
		return nil
	}
	if _, ptr := h.Type().Underlying().(*types.Pointer); !ptr {
		return nil
	}
	return h
}

// onlyFields reports whether a value is used only to address its
// pointee's fields, or compared.
func onlyFields(v ssa.Value) bool {
	refs := v.Referrers()
	if refs == nil {
		return true
	}
	for _, r := range *refs {
		switch r.(type) {
		case *ssa.FieldAddr, *ssa.BinOp:
		default:
			return false
		}
	}
	return true
}

// A struct held by value in a field (or in an array that a field holds)
// lives inside the object that holds the field, so two instances held in
// different fields are different memory:
//
//	type Report struct{ Counters }              // a report's copy
//	type cache struct{ counters Counters }      // the live one
//	atomic.AddUint64(&c.counters.Gets, 1)       // in cache.counters
//	r.Gets += atomic.LoadUint64(&c.counters.Gets) // r.Gets is in Report.Counters
//
// A field's holder is that field, or the variable itself where a
// package-level variable or a local value holds the struct directly;
// reached through a pointer, a slice or anything else, it is not known.

// holders returns, for each variable accessed atomically in the package,
// the holders of its atomic accesses; a variable one of whose atomic
// accesses has no known holder is left out.
func holders(res *regions.Result) map[*types.Var]map[any]bool {
	calls := argsByCallee(res)
	out := map[*types.Var]map[any]bool{}
	unknown := map[*types.Var]bool{}
	for _, f := range res.Funcs {
		for _, a := range f.Accesses {
			if a.Atomic == "" || a.Via != "" || a.Var == nil || unknown[a.Var] {
				continue
			}
			hs := holdersOf(atomicAddr(a), calls, 0)
			if hs == nil {
				unknown[a.Var] = true
				delete(out, a.Var)
				continue
			}
			if out[a.Var] == nil {
				out[a.Var] = map[any]bool{}
			}
			for _, h := range hs {
				out[a.Var][h] = true
			}
		}
	}
	return out
}

// elsewhereHeld reports whether the plain access a is of an instance held
// where none of its variable's atomic accesses are.
func elsewhereHeld(a *regions.Access, held map[*types.Var]map[any]bool) bool {
	hs, ok := held[a.Var]
	if !ok {
		return false
	}
	mine := holdersOf(plainAddr(a), nil, 0)
	return len(mine) == 1 && !hs[mine[0]]
}

// holdersOf returns what can hold the struct whose field the address
// &x.v takes: the field x is in (a *types.Var), or the package-level
// variable or local value x is. Where x is a parameter of a function
// whose every call the package makes (calls), the holders are those of
// the arguments. Nil means not known.
func holdersOf(addr ssa.Value, calls map[*ssa.Function][][]ssa.Value, depth int) []any {
	fa, ok := addr.(*ssa.FieldAddr)
	if !ok {
		return nil
	}
	return pointees(fa.X, calls, depth)
}

// pointees returns the holders of what the pointer x points to (see
// holdersOf).
func pointees(x ssa.Value, calls map[*ssa.Function][][]ssa.Value, depth int) []any {
	if ia, ok := x.(*ssa.IndexAddr); ok {
		if _, array := ia.X.Type().Underlying().(*types.Pointer); !array {
			return nil // a slice's element: slices share arrays
		}
		x = ia.X
	}
	switch x := x.(type) {
	case *ssa.FieldAddr:
		if v := regions.FieldOf(x); v != nil {
			return []any{v}
		}
	case *ssa.Global:
		return []any{x}
	case *ssa.Alloc:
		return []any{x}
	case *ssa.Parameter:
		fn := x.Parent()
		sites, ok := calls[fn]
		if !ok || depth >= 2 {
			return nil
		}
		i := slices.Index(fn.Params, x)
		var out []any
		for _, args := range sites {
			hs := pointees(args[i], calls, depth+1)
			if hs == nil {
				return nil
			}
			out = append(out, hs...)
		}
		return out
	}
	return nil
}

// argsByCallee returns the arguments (receiver first) of every call of
// each unexported function of the package that the package only calls
// directly: one used as a value, or a method that an interface call
// of the package can reach by its name, is left out.
func argsByCallee(res *regions.Result) map[*ssa.Function][][]ssa.Value {
	calls := map[*ssa.Function][][]ssa.Value{}
	bad := map[*ssa.Function]bool{}
	invoked := map[string]bool{}
	for _, f := range res.Funcs {
		for _, b := range f.Fn.Blocks {
			for _, instr := range b.Instrs {
				var callee ssa.Value
				if c, ok := instr.(ssa.CallInstruction); ok {
					if c.Common().IsInvoke() {
						invoked[c.Common().Method.Name()] = true
					} else if fn := c.Common().StaticCallee(); fn != nil && c.Common().Value == fn {
						callee = fn
						calls[fn] = append(calls[fn], c.Common().Args)
					}
				}
				for _, op := range instr.Operands(nil) {
					if fn, ok := (*op).(*ssa.Function); ok && *op != callee {
						bad[fn] = true
					}
				}
			}
		}
	}
	for fn := range calls {
		if _, ours := res.ByFunc[fn]; !ours || bad[fn] || token.IsExported(fn.Name()) || invoked[fn.Name()] || len(fn.FreeVars) > 0 {
			delete(calls, fn)
		}
	}
	return calls
}
