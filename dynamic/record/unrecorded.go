package record

import (
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/go-delve/delve/pkg/proc"
	"golang.org/x/tools/go/ssa"
)

// What was not recorded.
//
// The plan probes the accesses of shared state; the source of the
// packages under test makes others, which a run passes without a trace.
// So that a run that recorded little does not read as a clean one, the
// plan lists the accesses it does not probe (Plan.Unprobed), the recorder
// the lines it found no instruction at, and the recorder tells which of
// them are in a function the run entered (Outcome.Unrecorded): "reached"
// means their function was entered, which a one-shot breakpoint at its
// entry says for a cost of one stop per function, not that their line ran.

// Why an access of the packages under test is not recorded.
const (
	// ReasonNotShared: the regions model does not take the variable or
	// object accessed for shared state (a function's own variable, even
	// one whose address is taken or that a function literal captures; an
	// object the function allocated).
	ReasonNotShared = "not shared"
	// ReasonUnsupported: an access of shared state that the recorder
	// cannot record: one with no source expression to evaluate, a
	// sync/atomic call whose target it cannot tell, or a line for which
	// the compiler emitted no instruction.
	ReasonUnsupported = "not supported"
)

// Unprobed is an access that the source of the packages under test makes
// and that the recorder does not record.
type Unprobed struct {
	Spot
	Func   string // the enclosing function, as AccessProbe.Func
	Expr   string // the variable, as far as it can be named
	Reason string // ReasonNotShared or ReasonUnsupported
	Detail string // what makes it unsupported, for ReasonUnsupported
}

// addUnshared lists, as Unprobed, the loads and stores and the map
// accesses of fn that the regions analyzer did not take for accesses of
// shared state.
func (plan *Plan) addUnshared(fset *token.FileSet, f *regions.Func, seen map[string]bool) {
	taken := make(map[ssa.Instruction]bool, len(f.Accesses))
	for _, a := range f.Accesses {
		taken[a.Instr] = true
	}
	fn := funcName(f.Fn)
	add := func(pos token.Pos, expr string) {
		if !pos.IsValid() {
			return // made by the compiler, not written in the source
		}
		p := fset.Position(pos)
		if !plan.Files[p.Filename] {
			return
		}
		key := p.String()
		if seen[key] {
			return
		}
		seen[key] = true
		plan.Unprobed = append(plan.Unprobed, Unprobed{Spot: Spot{Line{p.Filename, p.Line}, p.Column}, Func: fn, Expr: expr, Reason: ReasonNotShared})
	}
	// A return statement stores its results into the function's result
	// variables when the function defers calls (or names its results):
	// code the compiler makes at the return's position, no access the
	// source writes.
	returns := make(map[token.Pos]bool)
	for _, b := range f.Fn.Blocks {
		for _, instr := range b.Instrs {
			if r, ok := instr.(*ssa.Return); ok {
				returns[r.Pos()] = true
			}
		}
	}
	for _, b := range f.Fn.Blocks {
		for _, instr := range b.Instrs {
			if taken[instr] {
				continue
			}
			if st, ok := instr.(*ssa.Store); ok && returns[st.Pos()] {
				if _, local := st.Addr.(*ssa.Alloc); local {
					continue
				}
			}
			switch in := instr.(type) {
			case *ssa.UnOp:
				if in.Op == token.MUL && !initialising(in.X) {
					add(in.Pos(), describe(in.X))
				}
			case *ssa.Store:
				if !initialising(in.Addr) {
					add(in.Pos(), describe(in.Addr))
				}
			case *ssa.MapUpdate:
				add(in.Pos(), describe(in.Map)+"[…]")
			case *ssa.Lookup:
				if _, ok := in.X.Type().Underlying().(*types.Map); ok {
					add(in.Pos(), describe(in.X)+"[…]")
				}
			}
		}
	}
}

// initialising reports whether addr is within an object that a composite
// literal or a call's variadic arguments make: storing into it builds
// the value, and no other goroutine can see it yet.
func initialising(addr ssa.Value) bool {
	for {
		switch a := addr.(type) {
		case *ssa.FieldAddr:
			addr = a.X
		case *ssa.IndexAddr:
			addr = a.X
		case *ssa.Alloc:
			switch a.Comment {
			case "complit", "slicelit", "varargs":
				return true
			}
			return false
		default:
			return false
		}
	}
}

// describe names the variable an address or a value stands for, as far
// as the SSA form tells it: "x", "s.n", "a[…]".
func describe(v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.Alloc:
		if v.Comment != "" {
			return v.Comment
		}
	case *ssa.FreeVar:
		return v.Name()
	case *ssa.Parameter:
		return v.Name()
	case *ssa.Global:
		return v.Name()
	case *ssa.FieldAddr:
		if st, ok := v.X.Type().Underlying().(*types.Pointer); ok {
			if s, ok := st.Elem().Underlying().(*types.Struct); ok && v.Field < s.NumFields() {
				return describe(v.X) + "." + s.Field(v.Field).Name()
			}
		}
	case *ssa.IndexAddr:
		return describe(v.X) + "[…]"
	case *ssa.Slice:
		return describe(v.X)
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return describe(v.X)
		}
	}
	return "?"
}

// unrecordedFunc names a function for the one-shot breakpoints that tell
// whether the run entered it: its file and its name in the binary without
// the package, which is how a probe's function and a binary's function
// meet (ofFunc). It reports false for a name runtimeFuncName cannot map.
func unrecordedFunc(file, fn string) (string, bool) {
	rt, ok := runtimeFuncName(fn)
	if !ok {
		return "", false
	}
	return file + "\x00" + withoutPackage(rt), true
}

// setReachBreakpoints sets a breakpoint at the entry of every function
// with an access that is not recorded (the plan's Unprobed and the
// probes of lines without an instruction), which clears itself at its
// first hit.
func (r *recorder) setReachBreakpoints() error {
	want := make(map[string]bool)
	names := make(map[string]bool) // the functions' names, to look up the binary's fast
	for _, u := range r.unprobed {
		if k, ok := unrecordedFunc(u.File, u.Func); ok {
			want[k] = true
			_, name, _ := strings.Cut(k, "\x00")
			names[name] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	bi := r.tgt.BinInfo()
	for i := range bi.Functions {
		fn := &bi.Functions[i]
		if fn.Entry == 0 || !names[withoutPackage(fn.Name)] {
			continue
		}
		file, _, _ := bi.PCToLine(fn.Entry)
		k := file + "\x00" + withoutPackage(fn.Name)
		if !want[k] {
			continue
		}
		addrs, err := proc.FindFunctionLocation(r.tgt, fn.Name, 0)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			r.reachAt[a] = k
			if _, ok := r.roles[a]; ok {
				continue // a probe's address too: its hits say it
			}
			if err := r.set(a, bpRole{reach: true}); err != nil {
				return err
			}
		}
	}
	return nil
}

// reach notes that the function whose entry is at addr was entered, and
// reports whether the breakpoint there is only for that, which it then
// clears.
func (r *recorder) reach(addr uint64, role bpRole) bool {
	if k, ok := r.reachAt[addr]; ok {
		r.reached[k] = true
	}
	if !role.reach {
		return false
	}
	delete(r.reachAt, addr)
	delete(r.roles, addr)
	_ = r.tgt.ClearBreakpoint(addr)
	return true
}

// unrecorded returns the accesses not recorded in the functions the run
// entered, sorted by position.
func (r *recorder) unrecorded() []Unprobed {
	var out []Unprobed
	for _, u := range r.unprobed {
		if k, ok := unrecordedFunc(u.File, u.Func); ok && r.reached[k] {
			out = append(out, u)
		}
	}
	sortUnprobed(out)
	return out
}

// sortUnprobed orders accesses by their position.
func sortUnprobed(out []Unprobed) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line.Line != b.Line.Line {
			return a.Line.Line < b.Line.Line
		}
		return a.Col < b.Col
	})
}
