package regions

import (
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Startup is the part of a function that runs while no goroutine that
// could interleave with it exists yet: a package initialiser (the init
// functions, and the initialisers of package-level variables, run one
// after another in one goroutine before main), a function given
// TestMain's *testing.M before it calls m.Run (no test has started), or a
// top-level test of a _test.go file before it calls t.Parallel (go test
// runs such a test alone: parallel tests wait until every test that is
// not parallel has finished). In each case the startup also ends where
// the function starts a goroutine, unless that goroutine cannot reach the
// package-level state of the access: its function and what it calls
// statically, as their accesses show, never touch that variable.
// Goroutines that another package's initialisation started, or that an
// earlier test left running, are not considered: they cannot call a
// package that has not finished initialising, but they can reach shared
// state of a third package, such as the environment.
type Startup struct {
	fn   *ssa.Function
	ends []startupEnd
	// spans caches, by the package-level variable an access reaches
	// ("" for any other state), which of fn's blocks the startup covers.
	spans map[string]*startupSpan
}

// startupEnd is an instruction that ends the startup: a go statement, a
// call of m.Run or t.Parallel. reach lists the package-level variables
// the goroutine a go statement starts can access; nil means any state.
type startupEnd struct {
	instr ssa.Instruction
	reach map[string]bool
}

type startupSpan struct {
	// first is the index of a block's first instruction that ends the
	// startup; after holds the blocks that run after one.
	first map[*ssa.BasicBlock]int
	after map[*ssa.BasicBlock]bool
}

// StartupOf returns the startup part of f, one of res's functions, or nil
// if f has none.
func StartupOf(res *Result, f *Func) *Startup {
	fn := f.Fn
	var ends func(ssa.Instruction) bool
	switch {
	case isInit(fn):
		ends = startsGoroutine
	case takesTestingM(fn):
		ends = func(instr ssa.Instruction) bool { return startsGoroutine(instr) || callsMRun(instr) }
	case isSerialTest(fn):
		ends = func(instr ssa.Instruction) bool { return startsGoroutine(instr) || callsParallel(instr) }
	default:
		return nil
	}
	s := &Startup{fn: fn, spans: map[string]*startupSpan{}}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if ends(instr) {
				s.ends = append(s.ends, startupEnd{instr: instr, reach: goroutineReach(res, instr)})
			}
		}
	}
	return s
}

// goroutineReach returns the package-level variables that the goroutine
// instr starts can access, or nil if instr is not a go statement whose
// function the package shows: its accesses (which include those of its
// static callees, through their summaries) and no go statement of its
// own.
func goroutineReach(res *Result, instr ssa.Instruction) map[string]bool {
	g, ok := instr.(*ssa.Go)
	if !ok || res == nil {
		return nil
	}
	gf := res.ByFunc[g.Call.StaticCallee()]
	if gf == nil {
		return nil
	}
	for _, b := range gf.Fn.Blocks {
		for _, in := range b.Instrs {
			if startsGoroutine(in) {
				return nil
			}
		}
	}
	reach := map[string]bool{}
	for _, a := range gf.Accesses {
		switch a.Path.Root.Kind {
		case RootGlobal:
			reach[a.Path.Root.ID] = true
		case RootLocal:
		default:
			// State reached through its arguments or captured
			// variables: what they point to is not known here.
			return nil
		}
	}
	return reach
}

// span returns the blocks of the startup for accesses of the
// package-level variable global ("" for other state).
func (s *Startup) span(global string) *startupSpan {
	if sp, ok := s.spans[global]; ok {
		return sp
	}
	sp := &startupSpan{first: map[*ssa.BasicBlock]int{}, after: map[*ssa.BasicBlock]bool{}}
	var work []*ssa.BasicBlock
	for _, e := range s.ends {
		if e.reach != nil && global != "" && !e.reach[global] {
			continue
		}
		b := e.instr.Block()
		i := slices.Index(b.Instrs, e.instr)
		if f, ok := sp.first[b]; !ok || i < f {
			sp.first[b] = i
		}
		work = append(work, b.Succs...)
	}
	for len(work) > 0 {
		b := work[len(work)-1]
		work = work[:len(work)-1]
		if !sp.after[b] {
			sp.after[b] = true
			work = append(work, b.Succs...)
		}
	}
	s.spans[global] = sp
	return sp
}

// Alone reports whether the access a, of the function s was computed
// for, is made during its startup. A nil Startup has none.
func (s *Startup) Alone(a *Access) bool {
	if s == nil || a.Instr == nil || a.Instr.Block() == nil {
		return false
	}
	global := ""
	if a.Path.Root.Kind == RootGlobal {
		global = a.Path.Root.ID
	}
	sp := s.span(global)
	b := a.Instr.Block()
	if sp.after[b] {
		return false
	}
	first, ok := sp.first[b]
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
	return isTesting(t, "M")
}

// isTesting reports whether t is testing.name or a pointer to it.
func isTesting(t types.Type, name string) bool {
	n, ok := types.Unalias(deref(t)).(*types.Named)
	return ok && n.Obj().Name() == name && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "testing"
}

// isSerialTest reports whether fn is a test or a benchmark that go test
// runs: a top-level TestXxx(*testing.T) or BenchmarkXxx(*testing.B) of a
// _test.go file.
func isSerialTest(fn *ssa.Function) bool {
	if fn.Parent() != nil || fn.Signature.Recv() != nil || len(fn.Params) != 1 || fn.Prog == nil {
		return false
	}
	var kind string
	switch {
	case strings.HasPrefix(fn.Name(), "Test"):
		kind = "T"
	case strings.HasPrefix(fn.Name(), "Benchmark"):
		kind = "B"
	default:
		return false
	}
	if !isTesting(fn.Params[0].Type(), kind) {
		return false
	}
	return strings.HasSuffix(fn.Prog.Fset.Position(fn.Pos()).Filename, "_test.go")
}

// callsParallel reports whether instr is a call of (*testing.T).Parallel,
// after which the test runs with the other parallel tests.
func callsParallel(instr ssa.Instruction) bool {
	c, ok := instr.(ssa.CallInstruction)
	if !ok {
		return false
	}
	callee := c.Common().StaticCallee()
	if callee == nil || callee.Name() != "Parallel" || callee.Signature.Recv() == nil {
		return false
	}
	return isTesting(callee.Signature.Recv().Type(), "T")
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
