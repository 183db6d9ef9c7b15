package record

import (
	"go/constant"
	"go/types"

	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/ssa"
)

// Writes of constants.
//
// A write records no value: the value stored may have been computed from
// values its goroutine read, which in another interleaving of the run
// could have been others, so the precise stage takes such a write to
// store anything once its goroutine read something (docs/predict.md).
// A write of a constant of the program (stopped = true, p.head = nil,
// n = 0, s.state = stateClosed) stores the same value in every
// interleaving in which it happens. The plan marks such writes with the
// value (AccessProbe.Const), and both recorders record it with the write
// (trace.ValueConst): a read that a branch tests and that would read the
// write in another interleaving then has a value to be compared with.
// Only the value is constant: where the write stores is still the
// question of trace.AddrVaries.
//
// The value is encoded as a read of the same variable records its own:
// a boolean as 0 or 1, an integer as its two's complement, a pointer as
// its address (nil is 0). Other types (strings, slices, interfaces,
// structs) record no value when read, and their writes are left unmarked.

// addConsts gives the plan's plain writes whose every SSA store, in
// every analysed package and function variant that the probe stands
// for, stores the same constant, that constant.
func (plan *Plan) addConsts(analysed []analysedPackage) {
	type stored struct {
		v  uint64
		ok bool
	}
	consts := make(map[guardKey]stored)
	for _, ap := range analysed {
		for _, f := range ap.res.Funcs {
			for _, a := range f.Accesses {
				if a.Kind != regions.Write || a.Via != "" || a.Atomic != "" || a.Expr == "" {
					continue
				}
				pos := ap.fset.Position(a.Pos)
				k := guardKey{Line{pos.Filename, pos.Line}, pos.Column, a.Expr}
				v, ok := storedConst(a.Instr)
				if old, seen := consts[k]; seen && (!old.ok || old.v != v) {
					ok = false
				}
				consts[k] = stored{v, ok}
			}
		}
	}
	for k, c := range consts {
		if !c.ok {
			continue
		}
		if p := plan.probe(k, true); p != nil && p.Map == "" && !p.Contents {
			v := c.v
			p.Const = &v
		}
	}
}

// storedConst returns the value a store instruction stores, encoded as a
// read of it records its value, if it is a constant of a type whose reads
// record one.
func storedConst(instr ssa.Instruction) (uint64, bool) {
	s, ok := instr.(*ssa.Store)
	if !ok {
		return 0, false
	}
	c, ok := s.Val.(*ssa.Const)
	if !ok {
		return 0, false
	}
	return constValue(c)
}

// constValue returns the value of an integer, boolean or pointer constant
// as the trace's Value: a boolean as 0 or 1, an integer as its two's
// complement, nil as 0. A constant with no value is its type's zero.
func constValue(c *ssa.Const) (uint64, bool) {
	switch t := c.Type().Underlying().(type) {
	case *types.Basic:
		info := t.Info()
		switch {
		case info&types.IsBoolean != 0:
			if c.Value == nil {
				return 0, true
			}
			if c.Value.Kind() != constant.Bool {
				return 0, false
			}
			if constant.BoolVal(c.Value) {
				return 1, true
			}
			return 0, true
		case info&types.IsInteger != 0:
			if c.Value == nil {
				return 0, true
			}
			if c.Value.Kind() != constant.Int {
				return 0, false
			}
			if info&types.IsUnsigned != 0 {
				return constant.Uint64Val(c.Value)
			}
			n, exact := constant.Int64Val(c.Value)
			return uint64(n), exact
		}
	case *types.Pointer:
		if c.Value == nil {
			return 0, true // nil
		}
	}
	return 0, false
}
