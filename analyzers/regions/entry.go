package regions

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// caller is one in-package call site of a function.
type caller struct {
	from *Func
	call Call
}

// EntryLocks infers the locks each unexported function of the package
// runs with: those held at every one of its in-package call sites,
// rewritten as paths of its own parameters or package-level mutexes.
// This is the "assumes c.mu is locked" contract that comments state. A
// lock that some call site holds only with RLock is entered read-held:
// a helper of readers may read what the lock guards, not write it. A
// function used as a value, or never called here, gets none. Calls in
// test files do not count: a test calls a helper where it knows the
// state is quiet (see inTest). It iterates
// so that a helper called only from such a function inherits its locks.
// A closure kept in an unexported field of function type is called where
// the field is called (fieldcall.go).
// A call on an object its caller owns (owned.go) holds every lock of
// the object.
// The entries' CS is zero: the callee's accesses share no critical
// section id with its own.
func EntryLocks(res *Result, inTest func(token.Pos) bool) map[*ssa.Function][]Held {
	callers, taken := callGraph(res, inTest)
	entry := map[*ssa.Function]entryState{}
	for range 4 {
		changed := false
		for _, f := range res.Funcs {
			fn := f.Fn
			if !entered(fn, callers, taken) {
				continue
			}
			var common entryState
			for i, c := range callers[fn] {
				from := entry[c.from.Fn]
				at := entryState{held: atCall(c, from.held, fn), owned: ownedArgs(c, from.owned)}
				if i == 0 {
					common = at
				} else {
					common = meetOwned(fn, common, at)
				}
			}
			if old := entry[fn]; !sameHeld(old.held, common.held) || !slices.Equal(old.owned, common.owned) {
				entry[fn] = common
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	out := make(map[*ssa.Function][]Held, len(entry))
	for fn, e := range entry {
		out[fn] = e.held
	}
	return out
}

// entered reports whether the package sees every call of fn, and there
// is at least one: its callers' locks are the ones it runs with.
func entered(fn *ssa.Function, callers map[*ssa.Function][]caller, taken map[*ssa.Function]bool) bool {
	return !(taken[fn] || len(callers[fn]) == 0)
}

// exposed reports whether another package can call fn: an exported
// function, or an exported method of a type that other packages can
// get. A method of an unexported type that no exported part of the
// package mentions (bucket.Init, where Cache holds its buckets in an
// unexported field) is called only here; an interface that another
// package asserts a value to could reach it, which such code does not do.
func exposed(fn *ssa.Function, hidden map[*types.TypeName]bool) bool {
	if fn.Parent() != nil || !token.IsExported(fn.Name()) {
		return false
	}
	recv := fn.Signature.Recv()
	if recv == nil {
		return true
	}
	t := types.Unalias(recv.Type())
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	named, ok := t.(*types.Named)
	return !ok || !hidden[named.Origin().Obj()]
}

// hiddenTypes returns the package's unexported named types that nothing
// exported mentions: no exported function's or method's signature, no
// exported variable, constant or type, no exported field, and no
// embedding (which promotes methods) anywhere.
func hiddenTypes(pkg *types.Package) map[*types.TypeName]bool {
	hidden := map[*types.TypeName]bool{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok && !tn.Exported() && !tn.IsAlias() {
			hidden[tn] = true
		}
	}
	if len(hidden) == 0 {
		return hidden
	}
	seen := map[types.Type]bool{}
	var mention func(t types.Type, depth int)
	mention = func(t types.Type, depth int) {
		if t == nil || seen[t] || depth > 8 {
			return
		}
		seen[t] = true
		switch t := types.Unalias(t).(type) {
		case *types.Named:
			delete(hidden, t.Origin().Obj())
			for a := range t.TypeArgs().Types() {
				mention(a, depth+1)
			}
		case *types.Pointer:
			mention(t.Elem(), depth+1)
		case *types.Slice:
			mention(t.Elem(), depth+1)
		case *types.Array:
			mention(t.Elem(), depth+1)
		case *types.Map:
			mention(t.Key(), depth+1)
			mention(t.Elem(), depth+1)
		case *types.Chan:
			mention(t.Elem(), depth+1)
		case *types.Signature:
			for v := range t.Params().Variables() {
				mention(v.Type(), depth+1)
			}
			for v := range t.Results().Variables() {
				mention(v.Type(), depth+1)
			}
		case *types.Struct:
			for f := range t.Fields() {
				if f.Exported() || f.Embedded() {
					mention(f.Type(), depth+1)
				}
			}
		case *types.Interface:
			for m := range t.Methods() {
				mention(m.Type(), depth+1)
			}
		}
	}
	// Embedding promotes methods wherever the outer type goes.
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok {
			if st, ok := tn.Type().Underlying().(*types.Struct); ok {
				for f := range st.Fields() {
					if f.Embedded() {
						mention(f.Type(), 0)
					}
				}
			}
		}
	}
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		mention(obj.Type(), 0)
		if tn, ok := obj.(*types.TypeName); ok {
			if named, ok := types.Unalias(tn.Type()).(*types.Named); ok {
				for m := range named.Methods() {
					if m.Exported() {
						mention(m.Type(), 0)
					}
				}
			}
			mention(tn.Type().Underlying(), 0)
		}
	}
	return hidden
}

// callGraph returns the in-package call sites of each function (calls in
// test files left out) and the functions used as values, whose callers
// are unknown.
func callGraph(res *Result, inTest func(token.Pos) bool) (map[*ssa.Function][]caller, map[*ssa.Function]bool) {
	callers := map[*ssa.Function][]caller{}
	taken := map[*ssa.Function]bool{}
	calls := map[*ssa.Call]Call{}
	for _, f := range res.Funcs {
		for _, c := range f.Calls {
			calls[c.Instr] = c
			if _, ours := res.ByFunc[c.Callee]; ours && !inTest(c.Instr.Pos()) {
				callers[c.Callee] = append(callers[c.Callee], caller{f, c})
			}
			// A closure passed as a synchronous callback runs inside
			// the call, with the caller's locks.
			for _, ca := range c.Closures {
				callers[ca.Fn] = append(callers[ca.Fn], caller{f, Call{Held: c.Held, Bindings: ca.Bindings}})
			}
		}
		// A deferred closure runs when its function returns, with the
		// locks whose deferred unlocks come after it.
		for _, d := range f.Deferred {
			callers[d.Fn] = append(callers[d.Fn], caller{f, Call{Held: d.Held, Bindings: d.Bindings}})
		}
	}
	for _, f := range res.Funcs {
		for _, b := range f.Fn.Blocks {
			for _, instr := range b.Instrs {
				markTaken(instr, calls, taken)
			}
		}
	}
	// A closure kept in a field runs where the field is called.
	for fn, cs := range fieldCallbacks(res, inTest) {
		callers[fn] = append(callers[fn], cs...)
		taken[fn] = false
	}
	// Another package can call what it can name: its callers are unknown.
	var hidden map[*types.TypeName]bool
	for _, f := range res.Funcs {
		if f.Fn.Parent() == nil && token.IsExported(f.Fn.Name()) {
			if hidden == nil && f.Fn.Pkg != nil {
				hidden = hiddenTypes(f.Fn.Pkg.Pkg)
			}
			if exposed(f.Fn, hidden) {
				taken[f.Fn] = true
			}
		}
	}
	return callers, taken
}

// markTaken records the package's functions that an instruction uses as
// a value rather than calls: their callers are unknown. A closure that is
// only ever called where it is made (remove := func() {...}; remove()),
// or passed as a synchronous callback, is not taken: its callers are
// those calls.
func markTaken(instr ssa.Instruction, calls map[*ssa.Call]Call, taken map[*ssa.Function]bool) {
	var called ssa.Value
	var callbacks []int
	if c, ok := instr.(ssa.CallInstruction); ok && !c.Common().IsInvoke() {
		called = c.Common().Value
		if call, ok := c.(*ssa.Call); ok {
			callbacks = calls[call].Callbacks
		}
	}
	if mc, ok := instr.(*ssa.MakeClosure); ok {
		if closureOnlyCalled(mc, calls) {
			return
		}
		taken[mc.Fn.(*ssa.Function)] = true
		return
	}
	ops := instr.Operands(nil)
	for i, op := range ops {
		fn, ok := (*op).(*ssa.Function)
		if !ok || *op == called {
			continue
		}
		// Operands of a call are its callee, then its arguments.
		if called != nil && slices.Contains(callbacks, i-1) {
			continue
		}
		taken[fn] = true
	}
}

// closureOnlyCalled reports whether a closure value is used only as the callee
// of calls in the goroutine that makes it, or as an argument that the
// callee only calls.
func closureOnlyCalled(mc *ssa.MakeClosure, calls map[*ssa.Call]Call) bool {
	refs := mc.Referrers()
	if refs == nil {
		return false
	}
	for _, r := range *refs {
		if d, ok := r.(*ssa.Defer); ok && d.Call.Value == mc && !slices.Contains(d.Call.Args, ssa.Value(mc)) {
			continue // deferred: it runs in this goroutine, as it returns
		}
		c, ok := r.(*ssa.Call)
		if !ok {
			return false
		}
		for i, a := range c.Call.Args {
			if a == mc && !slices.Contains(calls[c].Callbacks, i) {
				return false
			}
		}
	}
	return true
}

// atCall returns the locks held at a call, those the caller holds itself
// and those it runs with, as locks of the callee.
func atCall(c caller, callerEntry []Held, callee *ssa.Function) []Held {
	var out []Held
	add := func(h Held) {
		if p, ok := toCallee(h.Lock, c.call, callee); ok {
			out = append(out, Held{Lock: p, Read: h.Read})
		}
	}
	for _, h := range c.call.Held {
		add(h)
	}
	for _, h := range callerEntry {
		add(h)
	}
	return out
}

// toCallee rewrites a lock path of the caller as a path of the callee:
// through the argument it is reached from, or a captured variable of a
// closure, or unchanged for a package-level mutex.
func toCallee(l Path, call Call, callee *ssa.Function) (Path, bool) {
	if l.Root.Kind == RootGlobal {
		return l, true
	}
	via := func(bases []*Path, root func(i int) (Root, bool)) (Path, bool) {
		for i, a := range bases {
			if a == nil || !a.Root.Same(l.Root) || len(a.Fields) > len(l.Fields) || !slices.Equal(a.Fields, l.Fields[:len(a.Fields)]) {
				continue
			}
			r, ok := root(i)
			if !ok {
				break
			}
			return Path{Root: r, Fields: slices.Clone(l.Fields[len(a.Fields):])}, true
		}
		return Path{}, false
	}
	if p, ok := via(call.Args, func(i int) (Root, bool) {
		if i >= len(callee.Params) {
			return Root{}, false
		}
		return Root{Kind: RootParam, Index: i, Name: callee.Params[i].Name()}, true
	}); ok {
		return p, true
	}
	return via(call.Bindings, func(i int) (Root, bool) {
		if i >= len(callee.FreeVars) {
			return Root{}, false
		}
		return Root{Kind: RootFree, Index: i, Name: callee.FreeVars[i].Name()}, true
	})
}

// intersect returns the locks held in both a and b, read-held where
// either holds it only for reading.
func intersect(a, b []Held) []Held {
	var out []Held
	for _, x := range a {
		i := slices.IndexFunc(b, func(y Held) bool { return y.Lock.Key() == x.Lock.Key() })
		if i >= 0 {
			out = append(out, Held{Lock: x.Lock, Read: x.Read || b[i].Read})
		}
	}
	return out
}

func sameHeld(a, b []Held) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.ContainsFunc(b, func(y Held) bool { return y.Lock.Key() == x.Lock.Key() && y.Read == x.Read }) {
			return false
		}
	}
	return true
}

// GuardsOf returns the locks held at a, or on entry to its function,
// that can guard what it accesses: a sibling of the field in the same
// struct value, or a package-level mutex for a package-level variable.
func GuardsOf(a *Access, entry []Held) map[string]bool {
	target := a.Path
	for len(target.Fields) > 0 && target.Fields[len(target.Fields)-1] == "[]" {
		target.Fields = target.Fields[:len(target.Fields)-1]
	}
	held := slices.Concat(a.Held, entry)
	out := map[string]bool{}
	for _, h := range held {
		l := h.Lock
		switch {
		case l.Root.Kind == RootGlobal && len(l.Fields) == 0:
			out[l.Root.ID] = out[l.Root.ID] || !h.Read
		case len(target.Fields) > 0 && len(l.Fields) == len(target.Fields) && l.Root.Kind == target.Root.Kind &&
			l.Root.Index == target.Root.Index && l.Root.ID == target.Root.ID &&
			slices.Equal(l.Fields[:len(l.Fields)-1], target.Fields[:len(target.Fields)-1]):
			name := l.Fields[len(l.Fields)-1]
			out[name] = out[name] || !h.Read
		}
	}
	return out
}
