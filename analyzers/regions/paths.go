package regions

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// pathOf returns the path of the state that v addresses or refers to: v
// is an address (&c.n), or a reference value (a map, slice, channel or
// pointer loaded from somewhere). It fails for values whose origin it
// cannot name, such as call results and interface conversions.
func (fi *funcAnalysis) pathOf(v ssa.Value) (Path, bool) {
	return fi.pathOfDepth(v, 0)
}

// maxPathDepth bounds the walk through phis and loads, which in
// pathological code could otherwise revisit values forever.
const maxPathDepth = 24

func (fi *funcAnalysis) pathOfDepth(v ssa.Value, depth int) (Path, bool) {
	if depth > maxPathDepth {
		return Path{}, false
	}
	depth++
	switch v := v.(type) {
	case *ssa.Parameter:
		for i, p := range fi.fn.Params {
			if p == v {
				return Path{Root: Root{Kind: RootParam, Index: i, Name: v.Name()}}, true
			}
		}
	case *ssa.FreeVar:
		for i, p := range fi.fn.FreeVars {
			if p == v {
				return Path{Root: Root{Kind: RootFree, Index: i, Name: v.Name()}}, true
			}
		}
	case *ssa.Global:
		name := v.Name()
		if v.Pkg != nil && v.Pkg.Pkg != fi.pkg {
			name = v.Pkg.Pkg.Name() + "." + name
		}
		id := v.Name()
		if v.Pkg != nil {
			id = globalID(v)
		}
		return Path{Root: Root{Kind: RootGlobal, ID: id, Name: name}}, true
	case *ssa.Alloc:
		name := v.Comment
		if name == "" {
			name = v.Name()
		}
		fi.locals[v.Name()] = v
		return Path{Root: Root{Kind: RootLocal, ID: v.Name(), Name: name}}, true
	case *ssa.Extract:
		// A value received with "v, ok := <-ch", or by a select.
		if u, ok := v.Tuple.(*ssa.UnOp); ok && u.Op == token.ARROW && v.Index == 0 {
			return fi.received(v)
		}
		if _, ok := v.Tuple.(*ssa.Select); ok && v.Index >= 2 {
			return fi.received(v)
		}
		return fi.fresh(v)
	case *ssa.Call:
		return fi.fresh(v)
	case *ssa.FieldAddr:
		p, ok := fi.pathOfDepth(v.X, depth)
		if !ok {
			return Path{}, false
		}
		return p.with(fieldName(deref(v.X.Type()), v.Field)), true
	case *ssa.Field:
		p, ok := fi.pathOfDepth(v.X, depth)
		if !ok {
			return Path{}, false
		}
		return p.with(fieldName(v.X.Type(), v.Field)), true
	case *ssa.IndexAddr:
		p, ok := fi.pathOfDepth(v.X, depth)
		if !ok {
			return Path{}, false
		}
		return p.with(elem), true
	case *ssa.Index:
		p, ok := fi.pathOfDepth(v.X, depth)
		if !ok {
			return Path{}, false
		}
		return p.with(elem), true
	case *ssa.Lookup:
		if _, isMap := v.X.Type().Underlying().(*types.Map); !isMap || v.CommaOk {
			return Path{}, false
		}
		p, ok := fi.pathOfDepth(v.X, depth)
		if !ok {
			return Path{}, false
		}
		return p.with(elem), true
	case *ssa.UnOp:
		if v.Op == token.ARROW && !v.CommaOk {
			return fi.received(v)
		}
		// A reference loaded from an address refers to what the address
		// holds: c.cfg.Limit is reached through the load of c.cfg.
		if v.Op.String() == "*" {
			if a, ok := v.X.(*ssa.Alloc); ok {
				// A local variable that holds a reference, such as a
				// parameter that a closure captures (SSA keeps it in a
				// cell): what it refers to is what was stored in it.
				if s := onlyStored(a); s != nil {
					return fi.pathOfDepth(s, depth)
				}
			}
			return fi.pathOfDepth(v.X, depth)
		}
	case *ssa.ChangeType:
		return fi.pathOfDepth(v.X, depth)
	case *ssa.Convert:
		return fi.pathOfDepth(v.X, depth)
	case *ssa.Slice:
		return fi.pathOfDepth(v.X, depth)
	case *ssa.SliceToArrayPointer:
		return fi.pathOfDepth(v.X, depth)
	case *ssa.Phi:
		var first Path
		var key string
		for i, e := range v.Edges {
			if e == v {
				continue
			}
			p, ok := fi.pathOfDepth(e, depth)
			if !ok {
				return Path{}, false
			}
			if i == 0 || key == "" {
				first, key = p, p.Key()
			} else if p.Key() != key {
				return Path{}, false
			}
		}
		return first, key != ""
	}
	return Path{}, false
}

// onlyStored returns the one value ever stored in the local variable a,
// when a holds a reference (a pointer, map, slice or channel) and
// neither its function nor a closure that captures it stores anything
// else there; nil otherwise.
func onlyStored(a *ssa.Alloc) ssa.Value {
	if !isReference(deref(a.Type())) || a.Referrers() == nil {
		return nil
	}
	var val ssa.Value
	for _, ref := range *a.Referrers() {
		switch ref := ref.(type) {
		case *ssa.Store:
			if ref.Addr != a || val != nil && val != ref.Val {
				return nil
			}
			val = ref.Val
		case *ssa.UnOp, *ssa.DebugRef:
		case *ssa.MakeClosure:
			fn := ref.Fn.(*ssa.Function)
			for i, b := range ref.Bindings {
				if b == a && storesTo(fn.FreeVars[i]) {
					return nil
				}
			}
		default:
			return nil // its address escapes
		}
	}
	return val
}

// storesTo reports whether something is stored through v.
func storesTo(v ssa.Value) bool {
	if v.Referrers() == nil {
		return true
	}
	for _, ref := range *v.Referrers() {
		switch ref := ref.(type) {
		case *ssa.Store:
			if ref.Addr == v {
				return true
			}
		case *ssa.UnOp, *ssa.DebugRef:
		default:
			return true
		}
	}
	return false
}

func isReference(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Slice, *types.Chan:
		return true
	}
	return false
}

// fresh returns the path of a constructor's result, an object of this
// function's own (escape.go), if v is one.
func (fi *funcAnalysis) fresh(v ssa.Value) (Path, bool) {
	name, ok := fi.freshCall(v)
	if !ok {
		return Path{}, false
	}
	fi.locals[v.Name()] = v
	return Path{Root: Root{Kind: RootLocal, ID: v.Name(), Name: name}}, true
}

// received returns the path of a value received from a channel, when it
// refers to other state: another goroutine sent it, so what it refers to
// is shared from the start.
func (fi *funcAnalysis) received(v ssa.Value) (Path, bool) {
	if !mayRefer(v.Type()) {
		return Path{}, false
	}
	return Path{Root: Root{Kind: RootLocal, ID: v.Name(), Name: "<-" + v.Name(), Escaped: true}}, true
}

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func fieldName(t types.Type, i int) string {
	if st, ok := t.Underlying().(*types.Struct); ok && i < st.NumFields() {
		return st.Field(i).Name()
	}
	return "?"
}

// isSyncType reports whether values of t are synchronisation objects:
// channels and the types of packages sync and sync/atomic.
func isSyncType(t types.Type) bool {
	t = deref(types.Unalias(t))
	if _, ok := t.Underlying().(*types.Chan); ok {
		return true
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		switch n.Obj().Pkg().Path() {
		case "sync", "sync/atomic":
			return true
		}
	}
	return false
}

// varOf returns the field or package-level variable that the address v
// designates, if it designates one.
func varOf(v ssa.Value) *types.Var {
	switch v := v.(type) {
	case *ssa.FieldAddr:
		if st, ok := deref(v.X.Type()).Underlying().(*types.Struct); ok && v.Field < st.NumFields() {
			return st.Field(v.Field)
		}
	case *ssa.Global:
		obj, _ := v.Object().(*types.Var)
		return obj
	case *ssa.IndexAddr:
		return containerVar(v.X)
	}
	return nil
}

// containerVar returns the field or package-level variable that holds
// the map, slice or array v, whose elements an access reaches.
func containerVar(v ssa.Value) *types.Var {
	if load, ok := v.(*ssa.UnOp); ok && load.Op == token.MUL {
		return varOf(load.X)
	}
	return varOf(v)
}
