package regions

import (
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Startup is the part of a function that runs while no goroutine that
// could interleave with it exists yet: a package initialiser (the init
// functions, and the initialisers of package-level variables, run one
// after another in one goroutine before main), or a function given
// TestMain's *testing.M before it calls m.Run (no test has started), in
// either case up to where the function starts a goroutine. Goroutines
// that another package's initialisation started are not considered:
// they cannot call a package that has not finished initialising, but
// they can reach shared state of a third package, such as the
// environment.
type Startup struct {
	// first is the index of a block's first instruction that ends the
	// startup (a go statement, m.Run), and after the blocks that run
	// after one.
	first map[*ssa.BasicBlock]int
	after map[*ssa.BasicBlock]bool
}

// StartupOf returns the startup part of f, or nil if f has none.
func StartupOf(f *Func) *Startup {
	fn := f.Fn
	var ends func(ssa.Instruction) bool
	switch {
	case isInit(fn):
		ends = startsGoroutine
	case takesTestingM(fn):
		ends = func(instr ssa.Instruction) bool { return startsGoroutine(instr) || callsMRun(instr) }
	default:
		return nil
	}
	s := &Startup{first: map[*ssa.BasicBlock]int{}, after: map[*ssa.BasicBlock]bool{}}
	var work []*ssa.BasicBlock
	for _, b := range fn.Blocks {
		for i, instr := range b.Instrs {
			if ends(instr) {
				s.first[b] = i
				work = append(work, b.Succs...)
				break
			}
		}
	}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if !s.after[b] {
			s.after[b] = true
			work = append(work, b.Succs...)
		}
	}
	return s
}

// Alone reports whether the access a, of the function s was computed
// for, is made during its startup. A nil Startup has none.
func (s *Startup) Alone(a *Access) bool {
	if s == nil || a.Instr == nil || a.Instr.Block() == nil {
		return false
	}
	b := a.Instr.Block()
	if s.after[b] {
		return false
	}
	first, ok := s.first[b]
	if !ok {
		return true
	}
	for i, instr := range b.Instrs[:first+1] {
		if instr == a.Instr {
			return i < first
		}
	}
	return false
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
