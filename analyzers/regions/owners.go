package regions

import "golang.org/x/tools/go/ssa"

// A goroutine often owns some of its object's state: a connection's read
// loop writes a field under the lock, for the other goroutines that read
// it under the lock, and reads it itself without the lock. Its reads race
// with no write, since every write is its own. Owners works out which
// functions of the package run only in one goroutine: a function that
// one go statement starts, outside any loop, and that nothing else
// refers to; and a function that only such a goroutine's functions call
// (or defer). An unexported method that an interface call could reach,
// an exported function, one used as a value, and one that nothing in the
// package calls can be called from anywhere. One go statement is taken to
// start one goroutine per object it is given, which is how such loops
// are written.

// Owners maps each function of the package that runs only in one
// goroutine to the function that goroutine starts with.
func Owners(res *Result) map[*ssa.Function]*ssa.Function {
	// Who can run each function: the goroutines started at it (labelled
	// by their function), or anywhere.
	const anywhere = "anywhere"
	starts := map[*ssa.Function]int{}           // go statements that start it
	refs := map[*ssa.Function][]*ssa.Function{} // static callers, by call or defer
	escapes := map[*ssa.Function]bool{}         // referred to other than as a callee
	invoked := map[string]bool{}                // method names called through interfaces
	for _, f := range res.Funcs {
		for _, b := range f.Fn.Blocks {
			for _, instr := range b.Instrs {
				var callee *ssa.Function
				if c, ok := instr.(ssa.CallInstruction); ok {
					cc := c.Common()
					if cc.IsInvoke() {
						invoked[cc.Method.Name()] = true
					}
					callee = staticFunc(cc.Value)
					if callee != nil {
						if _, isGo := instr.(*ssa.Go); isGo {
							starts[callee]++
							if inLoop(b, instr) {
								starts[callee]++ // as if started many times
							}
						} else {
							refs[callee] = append(refs[callee], f.Fn)
						}
					}
				}
				var ops [8]*ssa.Value
				for i, op := range instr.Operands(ops[:0]) {
					if *op == nil || i == 0 && callee != nil {
						continue // the callee itself
					}
					if fn := staticFunc(*op); fn != nil {
						escapes[fn] = true
					}
				}
			}
		}
	}
	labels := map[*ssa.Function]map[any]bool{}
	var work []*ssa.Function
	add := func(fn *ssa.Function, l any) {
		if labels[fn] == nil {
			labels[fn] = map[any]bool{}
		}
		if !labels[fn][l] {
			labels[fn][l] = true
			work = append(work, fn)
		}
	}
	for _, f := range res.Funcs {
		fn := f.Fn
		if n := starts[fn]; n > 0 {
			if n == 1 {
				add(fn, fn)
			} else {
				add(fn, anywhere)
			}
		}
		if escapes[fn] || len(refs[fn]) == 0 && starts[fn] == 0 || fn.Object() != nil && fn.Object().Exported() ||
			fn.Signature.Recv() != nil && invoked[fn.Name()] {
			add(fn, anywhere)
		}
	}
	callees := map[*ssa.Function][]*ssa.Function{}
	for callee, callers := range refs {
		for _, c := range callers {
			callees[c] = append(callees[c], callee)
		}
	}
	for len(work) > 0 {
		fn := work[len(work)-1]
		work = work[:len(work)-1]
		for _, callee := range callees[fn] {
			for l := range labels[fn] {
				add(callee, l)
			}
		}
	}
	out := map[*ssa.Function]*ssa.Function{}
	for fn, ls := range labels {
		if len(ls) == 1 {
			for l := range ls {
				if g, ok := l.(*ssa.Function); ok {
					out[fn] = g
				}
			}
		}
	}
	return out
}

// staticFunc returns the function v names: a function, or a closure of
// one.
func staticFunc(v ssa.Value) *ssa.Function {
	switch v := v.(type) {
	case *ssa.Function:
		return v
	case *ssa.MakeClosure:
		fn, _ := v.Fn.(*ssa.Function)
		return fn
	}
	return nil
}

// inLoop reports whether instr, which does not end its block, can run
// again after itself: its block's end leads back to it.
func inLoop(b *ssa.BasicBlock, instr ssa.Instruction) bool {
	return Reaches(b.Instrs[len(b.Instrs)-1], instr)
}
