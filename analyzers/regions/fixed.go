package regions

import (
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A field that a constructor sets and nothing changes afterwards keeps
// the value its object was built with:
//
//	func buildCache(c *baseCache, cb *CacheBuilder) {
//		c.loader = cb.loader // c is new: newARC's &ARC{}
//	}
//
//	if c.loader == nil { return nil, ErrNotFound }
//	v, err := c.load(key)
//
// Every goroutine that reaches the object reads the same value there, so
// what it decides cannot go stale between two critical sections, and it
// is no evidence that the code after it is meant to be one step with
// what came before (Evidence). Such a field is unexported (no other
// package writes it), holds no struct or array (whose parts could be
// written apart), has its address taken only to load or store it, and
// every store of it in the package, or of a struct value that holds it,
// is made on an object not yet shared: allocated in the storing function
// and not handed to a goroutine that function starts, or a parameter of
// an unexported function that every call in the package passes such an
// object (and that is neither used as a value nor, as a method, called
// through an interface, so that no call goes unseen).

// fixedFields finds the fixed fields of pkg from the package's functions
// fns (buildssa's SrcFuncs, with the closures they make).
type fixedFields struct {
	pkg    *types.Package
	writes map[*types.Var][]fieldWrite
	bad    map[*types.Var]bool // address used other than to load or store
	calls  map[*ssa.Function][]callSite
	// asValue holds the functions, by object, that are used other than
	// as a static callee: a function value, a bound method, a method
	// expression.
	asValue map[*types.Func]bool
	invoked map[string]bool // method names called through an interface
	goes    map[*ssa.Function]bool
	fixed   map[*types.Var]bool // the answers so far
	// changed holds the package-level variables of the package, by
	// Root.ID, that a function other than an initializer stores to, or
	// that an instruction uses other than to load them whole (its
	// address taken, a field or element reached through it).
	changed map[string]bool
}

// fieldWrite is a store of a field: the object whose field is written,
// in the function that writes it.
type fieldWrite struct {
	base ssa.Value
	fn   *ssa.Function
}

type callSite struct {
	call *ssa.CallCommon
	fn   *ssa.Function
}

func newFixedFields(pkg *types.Package, fns []*ssa.Function) *fixedFields {
	ff := &fixedFields{
		pkg:     pkg,
		writes:  map[*types.Var][]fieldWrite{},
		bad:     map[*types.Var]bool{},
		calls:   map[*ssa.Function][]callSite{},
		asValue: map[*types.Func]bool{},
		invoked: map[string]bool{},
		goes:    map[*ssa.Function]bool{},
		fixed:   map[*types.Var]bool{},
		changed: map[string]bool{},
	}
	var ops []*ssa.Value
	for _, fn := range fns {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				ff.scan(fn, instr)
				var callee ssa.Value
				if c, ok := instr.(ssa.CallInstruction); ok && !c.Common().IsInvoke() {
					callee = c.Common().Value
				}
				ops = instr.Operands(ops[:0])
				for _, op := range ops {
					if g, ok := (*op).(*ssa.Global); ok && g.Pkg != nil && g.Pkg.Pkg == pkg && !loadsOrInits(instr, g, fn) {
						ff.changed[globalID(g)] = true
					}
					if f, ok := (*op).(*ssa.Function); ok && *op != callee {
						if obj, ok := f.Object().(*types.Func); ok {
							ff.asValue[obj.Origin()] = true
						}
					}
				}
			}
		}
	}
	return ff
}

// globalID is a package-level variable's Root.ID.
func globalID(g *ssa.Global) string { return g.Pkg.Pkg.Path() + "." + g.Name() }

// loadsOrInits reports whether instr, an instruction of fn, only loads
// the package-level variable g whole, or stores to it in an initializer
// of the package (a func init, the initialization of the variables).
func loadsOrInits(instr ssa.Instruction, g *ssa.Global, fn *ssa.Function) bool {
	switch in := instr.(type) {
	case *ssa.UnOp:
		return in.Op == token.MUL && in.X == g
	case *ssa.DebugRef:
		return true
	case *ssa.Store:
		if in.Addr != g || in.Val == g {
			return false
		}
		for fn.Parent() != nil {
			fn = fn.Parent()
		}
		name := fn.Name()
		return fn.Signature.Recv() == nil && (name == "init" || strings.HasPrefix(name, "init#"))
	}
	return false
}

// FixedGlobal reports whether the package-level variable id (a Root.ID)
// keeps the value its package's initialization gave it: it is the
// package's own, unexported (no other package writes it), and no
// function of the package but an initializer stores to it, nor reaches
// it other than to load it whole. A sentinel value returned on an
// error path (var emptyEntry = Entry{}) is one.
func (ff *fixedFields) FixedGlobal(id string) bool {
	name, ok := strings.CutPrefix(id, ff.pkg.Path()+".")
	return ok && !strings.Contains(name, ".") && !token.IsExported(name) && !ff.changed[id]
}

// scan notes what instr, an instruction of fn, tells of fields and calls.
func (ff *fixedFields) scan(fn *ssa.Function, instr ssa.Instruction) {
	switch in := instr.(type) {
	case *ssa.FieldAddr:
		v := fieldVar(in)
		if v == nil || v.Pkg() != ff.pkg {
			return
		}
		for _, r := range *in.Referrers() {
			switch r := r.(type) {
			case *ssa.UnOp:
				if r.Op == token.MUL {
					continue
				}
			case *ssa.Store:
				if r.Addr == in && r.Val != in {
					ff.writes[v] = append(ff.writes[v], fieldWrite{in.X, fn})
					continue
				}
			case *ssa.DebugRef:
				continue
			}
			ff.bad[v] = true
		}
	case *ssa.Store:
		// A struct value stored whole writes every field it holds.
		if p, ok := types.Unalias(in.Addr.Type()).Underlying().(*types.Pointer); ok {
			ff.wholeStore(p.Elem(), fieldWrite{in.Addr, fn}, 0)
		}
	case *ssa.Go:
		ff.goes[fn] = true
	}
	if c, ok := instr.(ssa.CallInstruction); ok {
		common := c.Common()
		if common.IsInvoke() {
			ff.invoked[common.Method.Name()] = true
		} else if callee := common.StaticCallee(); callee != nil {
			ff.calls[callee] = append(ff.calls[callee], callSite{common, fn})
		}
	}
}

// wholeStore notes a store of a value of type t as a write of each field
// of the package that t holds by value.
func (ff *fixedFields) wholeStore(t types.Type, w fieldWrite, depth int) {
	if depth > maxPathDepth {
		return
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		for i := range u.NumFields() {
			f := u.Field(i).Origin()
			if f.Pkg() == ff.pkg {
				ff.writes[f] = append(ff.writes[f], w)
			}
			ff.wholeStore(f.Type(), w, depth+1)
		}
	case *types.Array:
		ff.wholeStore(u.Elem(), w, depth+1)
	}
}

// fieldVar returns the field that in addresses, as declared.
func fieldVar(in *ssa.FieldAddr) *types.Var {
	p, ok := types.Unalias(in.X.Type()).Underlying().(*types.Pointer)
	if !ok {
		return nil
	}
	s, ok := p.Elem().Underlying().(*types.Struct)
	if !ok || in.Field >= s.NumFields() {
		return nil
	}
	return s.Field(in.Field).Origin()
}

// Fixed reports whether v is a fixed field of the package: see above.
func (ff *fixedFields) Fixed(v *types.Var) bool {
	if v == nil || !v.IsField() {
		return false
	}
	v = v.Origin()
	if ok, seen := ff.fixed[v]; seen {
		return ok
	}
	ok := v.Pkg() == ff.pkg && !v.Exported() && !ff.bad[v]
	if ok {
		switch v.Type().Underlying().(type) {
		case *types.Struct, *types.Array:
			ok = false
		}
	}
	for _, w := range ff.writes[v] {
		if !ok {
			break
		}
		ok = ff.fresh(w.base, w.fn, 0)
	}
	ff.fixed[v] = ok
	return ok
}

// maxFreshDepth bounds how many calls up fresh follows a parameter.
const maxFreshDepth = 3

// fresh reports whether v, a value of fn, is an object no other goroutine
// can reach yet where fn writes it (or a struct value held inside one).
func (ff *fixedFields) fresh(v ssa.Value, fn *ssa.Function, depth int) bool {
	switch x := containing(v).(type) {
	case *ssa.Alloc:
		return !ff.goes[fn]
	case *ssa.UnOp:
		// A local variable that holds the object (c := &T{} whose
		// address a closure takes).
		a, ok := x.X.(*ssa.Alloc)
		if !ok || x.Op != token.MUL {
			return false
		}
		s := onlyStored(a)
		return s != nil && ff.fresh(s, fn, depth)
	case *ssa.Parameter:
		if depth >= maxFreshDepth || fn.Parent() != nil || !ff.private(fn) {
			return false
		}
		idx := -1
		for i, p := range fn.Params {
			if p == x {
				idx = i
			}
		}
		sites := ff.calls[fn]
		if idx < 0 || len(sites) == 0 {
			return false
		}
		for _, s := range sites {
			if idx >= len(s.call.Args) || !ff.fresh(s.call.Args[idx], s.fn, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// private reports whether every call of fn is a static call the package
// makes: fn is unexported, not used as a value, and, as a method, not
// called through an interface.
func (ff *fixedFields) private(fn *ssa.Function) bool {
	obj, ok := fn.Object().(*types.Func)
	if !ok {
		return false
	}
	obj = obj.Origin()
	if obj.Exported() || obj.Pkg() != ff.pkg || ff.asValue[obj] {
		return false
	}
	if fn.Signature.Recv() != nil && ff.invoked[obj.Name()] {
		return false
	}
	return true
}
