package regions

import (
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// flow is the set of SSA values that carry data from some seed values,
// forward through computation, local variables, and calls (a call with
// a carrying argument is assumed to return a carrying result), with the
// blocks whose execution a carrying condition decides.
type flow struct {
	fa      *funcAnalysis
	vals    map[ssa.Value]bool
	conds   map[*ssa.If]bool // branches whose condition carries data
	results map[int]bool     // results of the function that carry data
}

// flowFrom follows what the seeds carry. With values set, it follows
// the seeds' own values only, not what they point to: a parameter c
// flows into c.n = v's v only if v is made from c itself, not from c.n.
func (fa *funcAnalysis) flowFrom(seeds []ssa.Value, values bool) *flow {
	fl := &flow{
		fa:      fa,
		vals:    map[ssa.Value]bool{},
		conds:   map[*ssa.If]bool{},
		results: map[int]bool{},
	}
	var work []ssa.Value
	add := func(v ssa.Value) {
		if v != nil && !fl.vals[v] {
			fl.vals[v] = true
			work = append(work, v)
		}
	}
	// storeInto records that store puts carried data into the local
	// variable behind addr: the loads from it that the store can reach
	// carry the data too. Locals are followed flow-sensitively because a
	// named result or a reused variable holds unrelated values on
	// different paths.
	var loadsFrom func(v ssa.Value, depth int, visit func(*ssa.UnOp))
	loadsFrom = func(v ssa.Value, depth int, visit func(*ssa.UnOp)) {
		refs := v.Referrers()
		if refs == nil || depth > maxPathDepth {
			return
		}
		for _, r := range *refs {
			switch r := r.(type) {
			case *ssa.UnOp:
				if r.Op == token.MUL {
					visit(r)
				}
			case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Slice:
				loadsFrom(r.(ssa.Value), depth+1, visit)
			}
		}
	}
	storeInto := func(addr ssa.Value, store ssa.Instruction) {
		p, ok := fa.pathOf(addr)
		if !ok || p.Root.Kind != RootLocal {
			return
		}
		root := fa.localRoot(addr)
		if root == nil {
			return
		}
		if obj := madeObject(addr); obj != nil {
			// Stored into a field or element of an object the function
			// made (n := &node{next: top}): the object now holds the
			// data, and storing the pointer to it elsewhere (s.top = n)
			// writes that data there.
			add(obj)
		}
		loadsFrom(root, 0, func(load *ssa.UnOp) {
			if Reaches(store, load) {
				add(load)
			}
		})
	}
	for _, s := range seeds {
		add(s)
	}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, instr := range *refs {
			switch in := instr.(type) {
			case *ssa.Store:
				if in.Val == v {
					storeInto(in.Addr, in)
				}
			case *ssa.MapUpdate:
				if p, ok := fa.pathOf(in.Map); ok && p.Root.Kind == RootLocal {
					add(in.Map)
				}
			case *ssa.If:
				fl.conds[in] = true
			case *ssa.Return:
				for i, r := range in.Results {
					if r == v {
						fl.results[i] = true
					}
				}
			case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Lookup:
				if !values {
					add(in.(ssa.Value))
				}
			case *ssa.UnOp:
				if !values || in.Op != token.MUL {
					add(in)
				}
			case *ssa.Call:
				if !values || !onlyPointee(v, in) {
					add(in)
				}
			case ssa.Value:
				add(in)
			}
		}
	}
	return fl
}

// onlyPointee says whether call's result can carry what pointer v
// points to but not v's own value: v is a pointer and every result is
// of a basic type (g.age(now), a number computed from g's fields). A
// result that may hold a pointer may hold v itself.
func onlyPointee(v ssa.Value, call *ssa.Call) bool {
	if _, ok := v.Type().Underlying().(*types.Pointer); !ok {
		return false
	}
	basic := func(t types.Type) bool {
		b, ok := t.Underlying().(*types.Basic)
		return ok && b.Kind() != types.UnsafePointer && b.Kind() != types.Uintptr
	}
	if tup, ok := call.Type().(*types.Tuple); ok {
		for i := range tup.Len() {
			if !basic(tup.At(i).Type()) {
				return false
			}
		}
		return true
	}
	return basic(call.Type())
}

// madeObject returns the Alloc of the object whose field or element
// addr is, reached through fields and array elements only: a part of the
// object itself, not of what it points to.
func madeObject(addr ssa.Value) *ssa.Alloc {
	for i := 0; i < maxPathDepth; i++ {
		switch x := addr.(type) {
		case *ssa.FieldAddr:
			addr = x.X
		case *ssa.IndexAddr:
			if _, ok := x.X.Type().Underlying().(*types.Pointer); !ok {
				return nil // a slice's element: another object
			}
			addr = x.X
		case *ssa.Alloc:
			if i == 0 {
				return nil // the variable itself, not a part of it
			}
			return x
		default:
			return nil
		}
	}
	return nil
}

// localRoot returns the Alloc at the root of a local address.
func (fa *funcAnalysis) localRoot(v ssa.Value) ssa.Value {
	for i := 0; i < maxPathDepth; i++ {
		switch x := v.(type) {
		case *ssa.Alloc:
			return x
		case *ssa.FieldAddr:
			v = x.X
		case *ssa.IndexAddr:
			v = x.X
		case *ssa.Slice:
			v = x.X
		case *ssa.UnOp:
			v = x.X
		default:
			return nil
		}
	}
	return nil
}

// deciders returns the branches that decide whether block b runs, the
// nearest first: a block that only one branch reaches is decided by it.
// The walk goes on past a branch whose block has no effects of its own
// (the parts of "a && b"), and stops at the first that does: the
// branches of a check-then-act are the check's, not those of every early
// return above it. It stops at a loop's header, which runs whichever
// way earlier branches went; a join of an if runs whichever way the
// branches between it and its immediate dominator went, so the walk goes
// on from that dominator.
func (fa *funcAnalysis) deciders(b *ssa.BasicBlock) []*ssa.If {
	if ds, ok := fa.decidersOf[b]; ok {
		return ds
	}
	var ds []*ssa.If
	for d, steps := b, 0; d != nil && steps <= len(fa.fn.Blocks); steps++ {
		if len(d.Preds) != 1 {
			if loopHeader(d) {
				break // it runs again whichever way the branches went
			}
			// A join of an if runs whichever way the branches since its
			// immediate dominator went, but only where the branches
			// above that dominator let it: the act after an inner if
			// (if r.Prepare != nil { ... }) is still the check's.
			d = d.Idom()
			continue
		}
		p := d.Preds[0]
		br, ok := p.Instrs[len(p.Instrs)-1].(*ssa.If)
		if !ok {
			d = p // a plain jump: the same decision holds
			continue
		}
		if p.Succs[1] == d && iterates(br) {
			// The end of a loop over a container or a count runs
			// once per entry into the loop, whatever the container
			// held: what decides it is what decides the loop's entry.
			d = p
			if loopHeader(p) && p.Idom() != nil {
				d = p.Idom()
			}
			continue
		}
		ds = append(ds, br)
		if hasEffects(p) && !guard(p, d) {
			break
		}
		d = p
	}
	fa.decidersOf[b] = ds
	return ds
}

// exitDeciders returns the branches that decide whether the join b runs
// by leaving the function on their other way, between b and its
// immediate dominator: the parts of a re-check whose hit returns early
// (if n > 0 && s.last[n-1] == k { return s.last[n-1] }; s.last = ...).
// deciders walks past such a join, as the branches of an if that joins
// again do not decide it; these do.
func exitDeciders(b *ssa.BasicBlock) []*ssa.If {
	if len(b.Preds) < 2 || loopHeader(b) || b.Idom() == nil {
		return nil
	}
	// Blocks reached from the dominator without passing b.
	inside := map[*ssa.BasicBlock]bool{}
	work := []*ssa.BasicBlock{b.Idom()}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		if x == b || inside[x] {
			continue
		}
		inside[x] = true
		work = append(work, x.Succs...)
	}
	// Of those, the ones that reach b and the ones that return.
	reach := func(target func(*ssa.BasicBlock) bool) map[*ssa.BasicBlock]bool {
		out := map[*ssa.BasicBlock]bool{}
		for changed := true; changed; {
			changed = false
			for x := range inside {
				if out[x] {
					continue
				}
				for _, s := range x.Succs {
					if target(s) || out[s] {
						out[x], changed = true, true
						break
					}
				}
			}
		}
		return out
	}
	toB := reach(func(s *ssa.BasicBlock) bool { return s == b })
	returns := func(x *ssa.BasicBlock) bool {
		_, ok := x.Instrs[len(x.Instrs)-1].(*ssa.Return)
		return ok && inside[x]
	}
	exits := reach(returns)
	var out []*ssa.If
	for x := range inside {
		br, ok := x.Instrs[len(x.Instrs)-1].(*ssa.If)
		if !ok {
			continue
		}
		t, f := x.Succs[0], x.Succs[1]
		if (t == b || toB[t]) && (returns(f) || exits[f]) || (f == b || toB[f]) && (returns(t) || exits[t]) {
			out = append(out, br)
		}
	}
	return out
}

// guard reports whether the branch ending block p, which reaches d on
// its false edge, is an early exit (if err != nil { return err }): its
// true edge leaves the function, so what follows runs only if it did
// not, and the branches above it still decide d. A branch whose true
// edge leads to the act (if err != nil { c.err = err }) is the act's own
// condition, and the walk stops there.
func guard(p, d *ssa.BasicBlock) bool {
	if len(p.Succs) != 2 || p.Succs[1] != d {
		return false
	}
	b := p.Succs[0]
	for range 8 {
		switch b.Instrs[len(b.Instrs)-1].(type) {
		case *ssa.Return, *ssa.Panic:
			return true
		case *ssa.Jump:
			if len(b.Succs) != 1 || len(b.Succs[0].Preds) != 1 {
				return false
			}
			b = b.Succs[0]
		default:
			return false
		}
	}
	return false
}

// loopHeader reports whether b is the header of a loop: one of its
// predecessors is reached only through it (a back edge).
// iterates reports whether br is the condition of a loop that steps
// through a container or a count: a range over a map or a string (its
// iterator says whether an element is left), or a loop whose index goes
// up by one while it is below a bound (a range over a slice, an array or
// an integer, or for i := 0; i < n; i++).
func iterates(br *ssa.If) bool {
	switch c := br.Cond.(type) {
	case *ssa.Extract:
		_, ok := c.Tuple.(*ssa.Next)
		return ok
	case *ssa.BinOp:
		if c.Op != token.LSS {
			return false
		}
		phi, ok := c.X.(*ssa.Phi)
		if !ok {
			return false
		}
		for _, e := range phi.Edges {
			if inc, ok := e.(*ssa.BinOp); ok && inc.Op == token.ADD && inc.X == phi {
				if k, ok := inc.Y.(*ssa.Const); ok && k.Value != nil && k.Value.Kind() == constant.Int && constant.Compare(k.Value, token.EQL, constant.MakeInt64(1)) {
					return true
				}
			}
		}
	}
	return false
}

func loopHeader(b *ssa.BasicBlock) bool {
	for _, p := range b.Preds {
		if b.Dominates(p) {
			return true
		}
	}
	return false
}

// hasEffects reports whether a block does more than compute a condition.
func hasEffects(b *ssa.BasicBlock) bool {
	for _, instr := range b.Instrs {
		switch instr := instr.(type) {
		case *ssa.Call:
			if bi, ok := instr.Call.Value.(*ssa.Builtin); !ok || !pureBuiltin(bi.Name()) {
				return true
			}
		case *ssa.Store, *ssa.MapUpdate, *ssa.Send, *ssa.Go, *ssa.Defer:
			return true
		}
	}
	return false
}

// feeds says whether the data of fl reaches the access: as the value it
// writes (data), or through a condition that decides whether it runs
// (control).
func (fl *flow) feeds(to *Access) (data, control bool) {
	for _, s := range to.srcs {
		if fl.vals[s] {
			data = true
		}
	}
	if to.Instr != nil && to.Instr.Block() != nil {
		for _, br := range fl.fa.deciders(to.Instr.Block()) {
			if fl.conds[br] {
				control = true
			}
		}
	}
	return data, control
}

// Feeds says whether the value read by from reaches the access to: as
// the value it writes (data), or through a condition that decides whether
// it runs (control). Both accesses must be of f.
func (f *Func) Feeds(from, to *Access) (data, control bool) {
	return f.flowOf(from).feeds(to)
}

// Deciders returns the branches whose condition carries the value read
// by from and that decide whether the access to runs, the nearest first:
// the branches through which Feeds finds control. Both accesses must be
// of f.
func (f *Func) Deciders(from, to *Access) []*ssa.If {
	if to.Instr == nil || to.Instr.Block() == nil {
		return nil
	}
	fl := f.flowOf(from)
	var out []*ssa.If
	for _, br := range fl.fa.deciders(to.Instr.Block()) {
		if fl.conds[br] {
			out = append(out, br)
		}
	}
	return out
}

type flowCache struct {
	fa     *funcAnalysis
	byRead map[*Access]*flow
	// What the rule of intent (intent.go) asks of single accesses, kept
	// so that a long function costs linear time per pair it checks.
	selfUpdate, used, unchanging map[*Access]bool
	csAccesses                   map[int][]*Access // per critical section, its accesses
	// flags holds, per pair of critical sections of one lock, the reads
	// of the first that claim a flag the second writes (owned).
	flags map[[2]int][]*Access
}

func (f *Func) flowOf(a *Access) *flow {
	if fl, ok := f.flows.byRead[a]; ok {
		return fl
	}
	fl := f.flows.fa.flowFrom(a.seeds, false)
	f.flows.byRead[a] = fl
	return fl
}

// pureBuiltin reports whether a builtin computes without effects.
func pureBuiltin(name string) bool {
	switch name {
	case "len", "cap", "min", "max", "real", "imag", "complex":
		return true
	}
	return false
}

// Reaches reports whether instruction to can run after instruction from
// in one execution of their function.
func Reaches(from, to ssa.Instruction) bool {
	fb, tb := from.Block(), to.Block()
	if fb == tb {
		for _, instr := range fb.Instrs {
			if instr == from {
				return true // from comes first
			}
			if instr == to {
				break
			}
		}
	}
	// Any path out of from's block that comes back to to's block.
	seen := map[*ssa.BasicBlock]bool{}
	work := append([]*ssa.BasicBlock(nil), fb.Succs...)
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if b == tb {
			return true
		}
		if seen[b] {
			continue
		}
		seen[b] = true
		work = append(work, b.Succs...)
	}
	return false
}
