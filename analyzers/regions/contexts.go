package regions

import (
	"fmt"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Context is one way a function is entered: the locks held along the
// chains of in-package calls that reach it through one call site and one
// Context of its caller. EntryLocks keeps only what every call holds; a
// helper whose callers hold different locks (one its object's RLock,
// another the lock of the cache the object was found in) has one Context
// for each.
type Context struct {
	// Held are the locks the function can name, as paths of its
	// parameters, captured variables or package-level mutexes.
	Held []Held
	// Other are the locks of objects the function cannot name (the
	// cache whose map a caller took the item from), by LockClass, each
	// with whether it is held for writing.
	Other map[string]bool
	// Consts are the boolean parameters that the calls of this Context
	// pass a constant to, by index, with its value: a lock that the
	// function takes only when one is true (condlock.go) is held or not.
	Consts map[int]bool
	// Owned are the parameters that the calls of this Context pass an
	// object their caller owns (owned.go): its state needs no lock.
	Owned []int
}

// maxContexts bounds the Contexts kept for one function; past it they
// are merged into the locks they all hold.
const maxContexts = 16

// EntryContexts returns the Contexts of each function that EntryLocks
// gives locks to: those whose every call the package sees, outside test
// files. The others have none: they may be entered with no lock held.
func EntryContexts(res *Result, inTest func(token.Pos) bool) map[*ssa.Function][]Context {
	callers, taken := callGraph(res, inTest)
	out := map[*ssa.Function][]Context{}
	for range 4 {
		changed := false
		for _, f := range res.Funcs {
			fn := f.Fn
			if !entered(fn, callers, taken) {
				continue
			}
			byKey := map[string]Context{}
			for _, c := range callers[fn] {
				from := out[c.from.Fn]
				if len(from) == 0 {
					from = []Context{{}}
				}
				for _, e := range from {
					if !runs(c, e) {
						continue
					}
					ctx := contextAt(c, e, fn)
					byKey[ctx.key()] = ctx
				}
			}
			keys := make([]string, 0, len(byKey))
			for k := range byKey {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			cs := make([]Context, len(keys))
			for i, k := range keys {
				cs[i] = byKey[k]
			}
			if len(cs) > maxContexts {
				cs = []Context{meet(cs)}
			}
			if !sameContexts(out[fn], cs) {
				out[fn] = cs
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return out
}

// contextAt returns the Context that a call gives its callee when its
// caller was entered with e.
func contextAt(c caller, e Context, callee *ssa.Function) Context {
	ctx := Context{Other: map[string]bool{}, Consts: constArgs(c, e), Owned: ownedArgs(c, e.Owned)}
	for k, w := range e.Other {
		ctx.Other[k] = w
	}
	add := func(h Held) {
		if p, ok := toCallee(h.Lock, c.call, callee); ok {
			k := p.Key()
			if i := slices.IndexFunc(ctx.Held, func(x Held) bool { return x.Lock.Key() == k }); i >= 0 {
				ctx.Held[i].Read = ctx.Held[i].Read && h.Read
				return
			}
			ctx.Held = append(ctx.Held, Held{Lock: p, Read: h.Read})
			return
		}
		if k, ok := LockClass(c.from.Fn, h.Lock); ok {
			ctx.Other[k] = ctx.Other[k] || !h.Read
		}
	}
	for _, h := range c.call.Held {
		add(h)
	}
	for _, h := range e.Held {
		add(h)
	}
	for _, ch := range c.call.CondHeld {
		if v, ok := e.Consts[ch.Param]; ok && v == ch.Value {
			add(ch.Held)
		}
	}
	return ctx
}

// constArgs returns the boolean constants a call passes, by the callee's
// parameter index: a constant argument, or a parameter of the caller
// that e knows.
func constArgs(c caller, e Context) map[int]bool {
	if c.call.Instr == nil {
		return nil
	}
	var out map[int]bool
	set := func(i int, v bool) {
		if out == nil {
			out = map[int]bool{}
		}
		out[i] = v
	}
	for i, a := range c.call.Instr.Call.Args {
		switch a := a.(type) {
		case *ssa.Const:
			if a.Value != nil && a.Value.Kind() == constant.Bool {
				set(i, constant.BoolVal(a.Value))
			}
		case *ssa.Parameter:
			for j, p := range c.from.Fn.Params {
				if v, ok := e.Consts[j]; ok && p == a {
					set(i, v)
				}
			}
		}
	}
	return out
}

func (c Context) key() string {
	var parts []string
	for _, h := range c.Held {
		parts = append(parts, h.Lock.Key()+mode(h.Read))
	}
	for k, w := range c.Other {
		parts = append(parts, k+mode(!w))
	}
	for i, v := range c.Consts {
		parts = append(parts, fmt.Sprintf("%d=%v", i, v))
	}
	for _, i := range c.Owned {
		parts = append(parts, fmt.Sprintf("own%d", i))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

func mode(read bool) string {
	if read {
		return "/r"
	}
	return "/w"
}

func sameContexts(a, b []Context) bool {
	return slices.EqualFunc(a, b, func(x, y Context) bool { return x.key() == y.key() })
}

// meet returns the Context of the locks every one of cs holds, read-held
// where any holds it only for reading.
func meet(cs []Context) Context {
	out := cs[0]
	other := map[string]bool{}
	for k, w := range out.Other {
		other[k] = w
	}
	for _, c := range cs[1:] {
		out.Held = intersect(out.Held, c.Held)
		for k, w := range other {
			cw, ok := c.Other[k]
			if !ok {
				delete(other, k)
				continue
			}
			other[k] = w && cw
		}
	}
	out.Other = other
	out.Consts = nil
	out.Owned = nil
	return out
}

// LockClass names a lock that fn reaches from a parameter or a captured
// variable by the type that holds it and the fields that lead to it from
// the nearest named type ("t:pkg.Cache.items.mu"), not by which value of
// that type: a caller's lock that its callee cannot name, or one that
// another function holds on another path to the same object. A
// package-level lock is its own class. A lock that is itself the
// parameter, or that a local variable holds, has none.
func LockClass(fn *ssa.Function, l Path) (string, bool) {
	if l.Root.Kind == RootGlobal {
		return l.Key(), true
	}
	owner, ok := OwnerClass(fn, l)
	if !ok {
		return "", false
	}
	return owner + "." + l.Fields[len(l.Fields)-1], true
}

// OwnerClass names the struct that holds the last field of p as
// LockClass names a lock before its own field: two locks, or a lock and
// a field, of one owner class may be of one value or of two.
func OwnerClass(fn *ssa.Function, p Path) (string, bool) {
	if len(p.Fields) == 0 || p.Root.Kind == RootGlobal {
		return "", false
	}
	var t types.Type
	switch i := p.Root.Index; p.Root.Kind {
	case RootParam:
		if i < len(fn.Params) {
			t = fn.Params[i].Type()
		}
	case RootFree:
		if i < len(fn.FreeVars) {
			t = fn.FreeVars[i].Type()
		}
	}
	name, since := "", 0
	for i, f := range p.Fields {
		if t == nil {
			return "", false
		}
		t = derefAll(t)
		if n, ok := t.(*types.Named); ok {
			name, since = types.TypeString(n.Origin(), nil), i
		}
		if i < len(p.Fields)-1 {
			t = step(t, f)
		}
	}
	if name == "" {
		return "", false
	}
	return "t:" + strings.Join(append([]string{name}, p.Fields[since:len(p.Fields)-1]...), "."), true
}

// step returns the type of field f (or of an element, for "[]") of a
// value of type t, or nil.
func step(t types.Type, f string) types.Type {
	if f == elem {
		switch u := t.Underlying().(type) {
		case *types.Slice:
			return u.Elem()
		case *types.Array:
			return u.Elem()
		case *types.Map:
			return u.Elem()
		}
		return nil
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	for i := range st.NumFields() {
		if st.Field(i).Name() == f {
			return st.Field(i).Type()
		}
	}
	return nil
}

// derefAll strips pointers (a captured variable's cell adds one) and
// aliases.
func derefAll(t types.Type) types.Type {
	t = types.Unalias(t)
	for {
		p, ok := t.(*types.Pointer)
		if !ok {
			return t
		}
		t = types.Unalias(p.Elem())
	}
}

// runs reports whether a call can run when its caller is entered with e:
// not when it needs a boolean parameter that e passes the other value of.
func runs(c caller, e Context) bool {
	for _, pc := range c.call.OnlyIf {
		if v, ok := e.Consts[pc.Param]; ok && v != pc.Value {
			return false
		}
	}
	return true
}
