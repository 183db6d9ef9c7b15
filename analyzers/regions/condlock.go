package regions

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// A function may take a lock only when a boolean parameter says so, and
// give it back under the same test, its callers that pass false holding
// the lock already:
//
//	if lock { c.mu.Lock() }
//	elem := c.get(key)
//	if lock { c.mu.Unlock() }
//
// The must-analysis of locks.go sees the lock held on one path only, so
// neither at the call between nor as given back. condLocks finds such
// pairs: a call between them runs with the lock held when the parameter
// is true (CondHeld, which EntryContexts follows into the callee with the
// value its callers pass), and the Unlock is not the release of a lock
// the caller held. The test may be the other way round, the lock taken
// when the parameter is false, and the release deferred where the lock
// is taken, the callers that pass true holding the lock:
//
//	if !locked {
//		r.mu.Lock()
//		defer r.mu.Unlock()
//	}
//
// The accesses after such a pair hold the lock as its calls do
// (Access.CondHeld).

// condLock is one such pair.
type condLock struct {
	held    Held
	param   int             // index in the function's Params
	value   bool            // the parameter's value that takes the lock
	test    *ssa.BasicBlock // the block of the If before the Lock
	untest  *ssa.BasicBlock // the block of the If before the Unlock; nil if deferred
	release *ssa.BasicBlock // the block of the Unlock, or of its defer
}

// A call that only runs when a boolean parameter has one value (if touch
// { item.touch() }) is not made by the calls of its function that pass
// the other (ParamCond, which EntryContexts follows).

// ParamCond says that a call runs only when the caller's boolean
// parameter Param is Value.
type ParamCond struct {
	Param int
	Value bool
}

// CondHeld is a lock held at a call, or an access, when the caller's
// boolean parameter Param is Value.
type CondHeld struct {
	Held  Held
	Param int
	Value bool
}

// paramTest returns the block's If on a boolean parameter, the index of
// the parameter, and the block it runs when the parameter is true.
func (fa *funcAnalysis) paramTest(b *ssa.BasicBlock) (int, *ssa.BasicBlock, bool) {
	if len(b.Instrs) == 0 || len(b.Succs) != 2 {
		return 0, nil, false
	}
	ifi, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
	if !ok {
		return 0, nil, false
	}
	p, ok := ifi.Cond.(*ssa.Parameter)
	if !ok || !types.Identical(p.Type().Underlying(), types.Typ[types.Bool]) {
		return 0, nil, false
	}
	for i, q := range fa.fn.Params {
		if q == p {
			return i, b.Succs[0], true
		}
	}
	return 0, nil, false
}

// lockOps returns the locks a block takes (Lock, RLock) and gives back.
func (fa *funcAnalysis) lockOps(b *ssa.BasicBlock) (taken, given []Held) {
	for _, instr := range b.Instrs {
		call, ok := instr.(*ssa.Call)
		if !ok {
			continue
		}
		o, _ := classify(call.Common())
		p, ok := fa.lockTarget(call.Common())
		if !ok {
			continue
		}
		switch o {
		case opLock, opRLock:
			taken = append(taken, Held{Lock: p, Read: o == opRLock})
		case opUnlock, opRUnlock:
			given = append(given, Held{Lock: p, Read: o == opRUnlock})
		}
	}
	return taken, given
}

// findCondLocks records the function's conditional lock pairs.
func (fa *funcAnalysis) findCondLocks() {
	type test struct {
		b, then *ssa.BasicBlock // then: the branch the parameter's value takes
		param   int
		value   bool
	}
	var tests []test
	for _, b := range fa.fn.Blocks {
		if i, _, ok := fa.paramTest(b); ok {
			for k, v := range []bool{true, false} {
				if then := b.Succs[k]; len(then.Preds) == 1 {
					tests = append(tests, test{b, then, i, v})
				}
			}
		}
	}
	for _, t := range tests {
		taken, _ := fa.lockOps(t.then)
		for _, h := range taken {
			if fa.deferredRelease(t.then, h) {
				fa.condLocks = append(fa.condLocks, condLock{held: h, param: t.param, value: t.value, test: t.b, release: t.then})
				continue
			}
			for _, u := range tests {
				if u.param != t.param || u.value != t.value || u.b == t.b || !t.b.Dominates(u.b) {
					continue
				}
				_, given := fa.lockOps(u.then)
				for _, g := range given {
					if h.Lock.Key() == g.Lock.Key() && h.Read == g.Read {
						fa.condLocks = append(fa.condLocks, condLock{held: h, param: t.param, value: t.value, test: t.b, untest: u.b, release: u.then})
					}
				}
			}
		}
	}
}

// deferredRelease reports whether block b defers the release of h.
func (fa *funcAnalysis) deferredRelease(b *ssa.BasicBlock, h Held) bool {
	for _, instr := range b.Instrs {
		d, ok := instr.(*ssa.Defer)
		if !ok {
			continue
		}
		o, _ := classify(d.Common())
		p, ok := fa.lockTarget(d.Common())
		if ok && p.Key() == h.Lock.Key() && (o == opUnlock && !h.Read || o == opRUnlock && h.Read) {
			return true
		}
	}
	return false
}

// condHeld returns the conditional locks held at an instruction, a call
// or an access: after the test that takes one, and before the test that
// gives it back (or anywhere after, if its release is deferred), where
// it is not held whatever the parameter.
func (fa *funcAnalysis) condHeld(instr ssa.Instruction) []CondHeld {
	var out []CondHeld
	b := instr.Block()
	for _, c := range fa.condLocks {
		inside := c.untest == nil && b == c.release // before the Lock, or held there anyway
		if b != c.test && !inside && c.test.Dominates(b) && (c.untest == nil || b.Dominates(c.untest)) && lockState(fa.held(instr)).find(c.held.Lock.Key()) < 0 {
			out = append(out, CondHeld{Held: c.held, Param: c.param, Value: c.value})
		}
	}
	return out
}

// condReleased reports whether an Unlock of lock in block b gives back a
// conditional lock.
func (fa *funcAnalysis) condReleased(b *ssa.BasicBlock, lock Path) bool {
	for _, c := range fa.condLocks {
		if c.release == b && c.held.Lock.Key() == lock.Key() {
			return true
		}
	}
	return false
}

// onlyIf returns the values of boolean parameters that a call needs to
// run: those of the Ifs on a parameter whose branch alone leads to it.
func (fa *funcAnalysis) onlyIf(call *ssa.Call) []ParamCond {
	var out []ParamCond
	b := call.Block()
	for _, t := range fa.fn.Blocks {
		i, _, ok := fa.paramTest(t)
		if !ok {
			continue
		}
		for k, v := range []bool{true, false} {
			if s := t.Succs[k]; len(s.Preds) == 1 && s.Dominates(b) {
				out = append(out, ParamCond{Param: i, Value: v})
			}
		}
	}
	return out
}
