package regions

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// flow is the set of SSA values that carry data from some seed values,
// forward through computation, local variables, and calls (a call with
// a carrying argument is assumed to return a carrying result), with the
// blocks whose execution a carrying condition decides.
type flow struct {
	vals    map[ssa.Value]bool
	mem     map[ssa.Value]bool // local variables that hold carried data
	guarded map[*ssa.BasicBlock]bool
	results map[int]bool // results of the function that carry data
}

// flowFrom follows what the seeds carry. With values set, it follows
// the seeds' own values only, not what they point to: a parameter c
// flows into c.n = v's v only if v is made from c itself, not from c.n.
func (fa *funcAnalysis) flowFrom(seeds []ssa.Value, values bool) *flow {
	fl := &flow{
		vals:    map[ssa.Value]bool{},
		mem:     map[ssa.Value]bool{},
		guarded: map[*ssa.BasicBlock]bool{},
		results: map[int]bool{},
	}
	var work []ssa.Value
	add := func(v ssa.Value) {
		if v != nil && !fl.vals[v] {
			fl.vals[v] = true
			work = append(work, v)
		}
	}
	// storeInto marks the local variable behind addr as holding carried
	// data, and every later load from it as carrying it.
	var storeInto func(addr ssa.Value)
	storeInto = func(addr ssa.Value) {
		p, ok := fa.pathOf(addr)
		if !ok || p.Root.Kind != RootLocal {
			return
		}
		root := fa.localRoot(addr)
		if root == nil || fl.mem[root] {
			return
		}
		fl.mem[root] = true
		var visit func(v ssa.Value, depth int)
		visit = func(v ssa.Value, depth int) {
			refs := v.Referrers()
			if refs == nil || depth > maxPathDepth {
				return
			}
			for _, r := range *refs {
				switch r := r.(type) {
				case *ssa.UnOp:
					if r.Op == token.MUL {
						add(r)
					}
				case *ssa.FieldAddr, *ssa.IndexAddr, *ssa.Slice:
					visit(r.(ssa.Value), depth+1)
				case *ssa.Call:
					add(r) // a method of the local value reads it
				}
			}
		}
		visit(root, 0)
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
					storeInto(in.Addr)
				}
			case *ssa.MapUpdate:
				if p, ok := fa.pathOf(in.Map); ok && p.Root.Kind == RootLocal {
					add(in.Map)
				}
			case *ssa.If:
				fa.markGuarded(in, fl.guarded)
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
			case ssa.Value:
				add(in)
			}
		}
	}
	return fl
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

// markGuarded marks the blocks whose execution the condition of in
// decides: those dominated by a successor that only in's block reaches.
// A join after an if-else is not among them; the rest of a function after
// "if cond { return }" is.
func (fa *funcAnalysis) markGuarded(in *ssa.If, guarded map[*ssa.BasicBlock]bool) {
	b := in.Block()
	for _, s := range b.Succs {
		if len(s.Preds) != 1 {
			continue
		}
		for _, x := range fa.fn.Blocks {
			if !guarded[x] && s.Dominates(x) {
				guarded[x] = true
			}
		}
	}
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
		control = fl.guarded[to.Instr.Block()]
	}
	return data, control
}

// Feeds says whether the value read by from reaches the access to: as
// the value it writes (data), or through a condition that decides whether
// it runs (control). Both accesses must be of f.
func (f *Func) Feeds(from, to *Access) (data, control bool) {
	return f.flowOf(from).feeds(to)
}

type flowCache struct {
	fa      *funcAnalysis
	byRead  map[*Access]*flow
	byParam map[int]*flow
}

func (f *Func) flowOf(a *Access) *flow {
	if fl, ok := f.flows.byRead[a]; ok {
		return fl
	}
	fl := f.flows.fa.flowFrom(a.seeds, false)
	f.flows.byRead[a] = fl
	return fl
}
