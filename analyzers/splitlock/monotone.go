package splitlock

import (
	"go/constant"
	"go/token"
	"go/types"

	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/ssa"
)

// A counter that one goroutine drains while the others only add to it is
// checked and decremented in two critical sections without harm:
//
//	mu.Lock()
//	if c.pending == 0 { mu.Unlock(); return }  // the read loop alone...
//	mu.Unlock()
//	...
//	mu.Lock()
//	c.pending--                                 // ...decrements
//	mu.Unlock()
//
// Between the check and the decrement, other goroutines can only
// increment, which keeps the counter above zero: the check cannot go
// stale in the direction that matters. The same holds the other way
// round, for one goroutine that fills up to a limit while the others
// only take away. A check of "below the limit" followed by an increment
// that other goroutines also make (the limit overshoot) stays reported.

// monotone reports whether the check r, which decides the relative
// update w of an unexported counter field, stays true whatever the other
// goroutines do: w moves the counter one way, every write of the field
// that moves it the same way runs in the goroutine that makes r and w
// (regions.Owners), every other write moves it the other way, and the
// outcome of r that leads to w is a bound that such writes keep.
func monotone(res *regions.Result, owner map[*ssa.Function]*ssa.Function, f *regions.Func, r, w *regions.Access) bool {
	v := w.Var
	g := owner[f.Fn]
	if v == nil || v.Exported() || !v.IsField() || g == nil || !isInteger(v.Type()) {
		return false
	}
	d := direction(w)
	if d == 0 {
		return false
	}
	for _, of := range res.Funcs {
		for _, a := range of.Accesses {
			if a.Var != v || a.Kind != regions.Write || a.Via != "" {
				continue
			}
			switch direction(a) {
			case d:
				if owner[of.Fn] != g {
					return false
				}
			case -d:
			default:
				return false
			}
		}
	}
	deciders := f.Deciders(r, w)
	if len(deciders) == 0 {
		return false
	}
	for _, br := range deciders {
		if !keptBound(br, r, w, -d) {
			return false
		}
	}
	return true
}

// direction returns +1 for a write that adds a positive constant to what
// it reads of the same variable (c.n++, c.n += 2), -1 for one that
// subtracts one, and 0 for any other write.
func direction(w *regions.Access) int {
	st, ok := w.Instr.(*ssa.Store)
	if !ok {
		return 0
	}
	op, ok := st.Val.(*ssa.BinOp)
	if !ok || (op.Op != token.ADD && op.Op != token.SUB) {
		return 0
	}
	load, ok := op.X.(*ssa.UnOp)
	if !ok || load.Op != token.MUL || !sameAddr(load.X, st.Addr) {
		return 0
	}
	k, ok := op.Y.(*ssa.Const)
	if !ok || k.Value == nil || k.Value.Kind() != constant.Int {
		return 0
	}
	s := constant.Sign(k.Value)
	if op.Op == token.SUB {
		s = -s
	}
	return s
}

// keptBound reports whether the branch br, on the value r read, leads to
// w only on an outcome that writes moving the counter in direction other
// keep true: a lower bound (n > k, n >= k, or n != 0 of a counter) for
// increments, an upper bound (n < k, n <= k) for decrements.
func keptBound(br *ssa.If, r, w *regions.Access, other int) bool {
	cond, ok := br.Cond.(*ssa.BinOp)
	if !ok {
		return false
	}
	read, ok := r.Instr.(ssa.Value)
	if !ok {
		return false
	}
	op := cond.Op
	var k *ssa.Const
	switch {
	case cond.X == read:
		k, _ = cond.Y.(*ssa.Const)
	case cond.Y == read:
		k, _ = cond.X.(*ssa.Const)
		op = regions.FlipCmp(op)
	}
	if k == nil || k.Value == nil || k.Value.Kind() != constant.Int {
		return false
	}
	succs := br.Block().Succs
	onTrue := regions.Reaches(succs[0].Instrs[0], w.Instr)
	onFalse := regions.Reaches(succs[1].Instrs[0], w.Instr)
	switch {
	case onTrue && !onFalse:
	case onFalse && !onTrue:
		op = regions.NegateCmp(op)
	default:
		return false
	}
	switch op {
	case token.GTR, token.GEQ:
		return other > 0
	case token.NEQ:
		// A counter is never below zero: n != 0 is n > 0.
		return other > 0 && constant.Sign(k.Value) == 0
	case token.LSS, token.LEQ:
		return other < 0
	}
	return false
}

// sameAddr reports whether a and b are the same address: one value, or
// the same field of one value (go/ssa addresses c.n anew for the read
// and the write of c.n--).
func sameAddr(a, b ssa.Value) bool {
	if a == b {
		return true
	}
	fa, ok1 := a.(*ssa.FieldAddr)
	fb, ok2 := b.(*ssa.FieldAddr)
	return ok1 && ok2 && fa.X == fb.X && fa.Field == fb.Field
}

func isInteger(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0
}
