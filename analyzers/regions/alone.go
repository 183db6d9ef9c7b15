package regions

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Alone reports whether f makes the access a while no goroutine that
// could interleave with it exists yet: in a package initialiser (the
// init functions, and the initialisers of package-level variables, run
// one after another in one goroutine before main), or in a function
// given TestMain's *testing.M before it calls m.Run (no test has
// started), and in either case before the function itself starts a
// goroutine. Goroutines that another package's initialisation started
// are not considered: they cannot call a package that has not finished
// initialising, but they can reach shared state of a third package,
// such as the environment.
func Alone(f *Func, a *Access) bool {
	if a.Instr == nil || a.Instr.Block() == nil {
		return false
	}
	fn := f.Fn
	if isInit(fn) {
		return !reachedFrom(fn, a.Instr, startsGoroutine)
	}
	if !takesTestingM(fn) {
		return false
	}
	return !reachedFrom(fn, a.Instr, func(instr ssa.Instruction) bool {
		return startsGoroutine(instr) || callsMRun(instr)
	})
}

// isInit reports whether fn is a package initialiser: an init function
// (init#1, init#2, ... in SSA) or the synthesised init, not a method
// that happens to be named init.
func isInit(fn *ssa.Function) bool {
	if fn.Parent() != nil || fn.Signature.Recv() != nil || fn.Signature.Params().Len() != 0 {
		return false
	}
	return fn.Name() == "init" || strings.HasPrefix(fn.Name(), "init#")
}

func takesTestingM(fn *ssa.Function) bool {
	if fn.Parent() != nil {
		return false
	}
	for _, p := range fn.Params {
		if isTestingM(p.Type()) {
			return true
		}
	}
	return false
}

func isTestingM(t types.Type) bool {
	n, ok := types.Unalias(deref(t)).(*types.Named)
	return ok && n.Obj().Name() == "M" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "testing"
}

func startsGoroutine(instr ssa.Instruction) bool {
	switch instr := instr.(type) {
	case *ssa.Go:
		return true
	case *ssa.Call:
		o, _ := classify(instr.Common())
		return o == opWGGo
	}
	return false
}

// callsMRun reports whether instr is a call of (*testing.M).Run, which
// runs the tests.
func callsMRun(instr ssa.Instruction) bool {
	c, ok := instr.(ssa.CallInstruction)
	if !ok {
		return false
	}
	callee := c.Common().StaticCallee()
	if callee == nil || callee.Name() != "Run" || callee.Signature.Recv() == nil {
		return false
	}
	return isTestingM(callee.Signature.Recv().Type())
}

// reachedFrom reports whether to can run after an instruction of fn
// that is marked, in one execution of fn.
func reachedFrom(fn *ssa.Function, to ssa.Instruction, marked func(ssa.Instruction) bool) bool {
	var work []*ssa.BasicBlock
	seen := map[*ssa.BasicBlock]bool{}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if !marked(instr) {
				continue
			}
			if b == to.Block() && before(b, instr, to) {
				return true
			}
			if !seen[b] {
				seen[b] = true
				work = append(work, b)
			}
			break
		}
	}
	// Any path out of a marked instruction's block that comes to to's.
	done := map[*ssa.BasicBlock]bool{}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		for _, s := range b.Succs {
			if s == to.Block() {
				return true
			}
			if !done[s] {
				done[s] = true
				work = append(work, s)
			}
		}
	}
	return false
}

// before reports whether x comes before y in block b.
func before(b *ssa.BasicBlock, x, y ssa.Instruction) bool {
	for _, instr := range b.Instrs {
		switch instr {
		case x:
			return true
		case y:
			return false
		}
	}
	return false
}
