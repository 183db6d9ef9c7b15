package atomicact

import (
	"go/token"
	"go/types"

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
	var addr ssa.Value
	switch in := a.Instr.(type) {
	case *ssa.UnOp:
		addr = in.X
	case *ssa.Store:
		addr = in.Addr
	default:
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
