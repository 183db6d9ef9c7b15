package regions

import (
	"fmt"
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// The lock state of a function is computed over its SSA blocks, as a
// must-analysis: a lock is held at a point if it is held on every path to
// it. Each acquisition is a critical section (CS) with an id; where paths
// with different acquisitions of one lock meet, the lock stays held under
// the id of the set of acquisitions that meet there (unionCS); such a set
// only grows, so the fixed point is reached after a few visits of a block
// per lock.

type lockState []Held // outermost first

func (s lockState) find(key string) int {
	for i, h := range s {
		if h.Lock.Key() == key {
			return i
		}
	}
	return -1
}

func (s lockState) with(h Held) lockState {
	if s.find(h.Lock.Key()) >= 0 {
		return s // a second Lock of a held lock deadlocks; keep the first
	}
	out := make(lockState, len(s), len(s)+1)
	copy(out, s)
	return append(out, h)
}

func (s lockState) without(key string) (lockState, Held, bool) {
	i := s.find(key)
	if i < 0 {
		return s, Held{}, false
	}
	out := make(lockState, 0, len(s)-1)
	out = append(out, s[:i]...)
	return append(out, s[i+1:]...), s[i], true
}

func equalStates(a, b lockState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].CS != b[i].CS || a[i].Read != b[i].Read || a[i].Lock.Key() != b[i].Lock.Key() {
			return false
		}
	}
	return true
}

// merge intersects the states of two paths meeting at block b. A lock
// held on both paths in different critical sections is held, after the
// join, in the critical section of their union: its id stands for the set
// of acquisitions that can have taken it, wherever paths with that set
// meet. A loop's header that a path enters before the fixed point knows
// all of a join's acquisitions thus ends up in the same critical section
// as the join, not in one of its own. A lock write-held on one path and
// read-held on the other is read-held after the join (a double-checked
// RUnlock; Lock on a miss, a deferred RUnlock on a hit): either way,
// no writer holds it.
func (fa *funcAnalysis) merge(b int, x, y lockState) lockState {
	var out lockState
	for _, h := range x {
		j := y.find(h.Lock.Key())
		if j < 0 {
			continue
		}
		h.Read = h.Read || y[j].Read
		if y[j].CS != h.CS {
			h.CS = fa.unionCS(h.CS, y[j].CS)
		}
		out = append(out, h)
	}
	return out
}

// unionCS returns the id of the critical section that a and b merge into.
func (fa *funcAnalysis) unionCS(a, b int) int {
	origins := func(id int) []int {
		if o, ok := fa.csOrigins[id]; ok {
			return o
		}
		return []int{id}
	}
	set := slices.Concat(origins(a), origins(b))
	slices.Sort(set)
	set = slices.Compact(set)
	if len(set) == 1 {
		return set[0]
	}
	key := fmt.Sprint(set)
	id, ok := fa.mergedCS[key]
	if !ok {
		id = fa.newCS()
		fa.mergedCS[key] = id
		fa.csOrigins[id] = set
	}
	return id
}

func (fa *funcAnalysis) newCS() int {
	fa.nextCS++
	return fa.nextCS
}

// lockTarget returns the path of the mutex a lock operation acts on.
func (fa *funcAnalysis) lockTarget(c *ssa.CallCommon) (Path, bool) {
	if len(c.Args) == 0 {
		return Path{}, false
	}
	return fa.pathOf(c.Args[0])
}

// computeLocks runs the dataflow to its fixed point, then records the
// state before every instruction, and the acquisitions and releases that
// delimit lock-scope regions.
func (fa *funcAnalysis) computeLocks() {
	blocks := fa.fn.Blocks
	if len(blocks) == 0 {
		return
	}
	fa.findCondLocks()
	in := make([]lockState, len(blocks))
	seen := make([]bool, len(blocks))
	queued := make([]bool, len(blocks))
	seen[0], queued[0] = true, true
	work := []*ssa.BasicBlock{blocks[0]}
	for len(work) > 0 {
		b := work[0]
		work = work[1:]
		queued[b.Index] = false
		st := in[b.Index]
		for _, instr := range b.Instrs {
			st = fa.transfer(instr, st, false)
		}
		for i, s := range b.Succs {
			out := fa.edge(b, i, st)
			if seen[s.Index] {
				m := fa.merge(s.Index, in[s.Index], out)
				if equalStates(m, in[s.Index]) {
					continue
				}
				out = m
			}
			in[s.Index], seen[s.Index] = out, true
			if !queued[s.Index] {
				queued[s.Index] = true
				work = append(work, s)
			}
		}
	}
	for _, b := range blocks {
		if !seen[b.Index] {
			continue
		}
		st := in[b.Index]
		for _, instr := range b.Instrs {
			fa.heldBefore[instr] = st
			st = fa.transfer(instr, st, true)
		}
	}
}

// edge adds the lock that a successful TryLock holds on the branch that
// knows it succeeded.
func (fa *funcAnalysis) edge(b *ssa.BasicBlock, succ int, st lockState) lockState {
	if len(b.Instrs) == 0 {
		return st
	}
	ifInstr, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
	if !ok {
		return st
	}
	cond, want := ifInstr.Cond, 0
	if not, ok := cond.(*ssa.UnOp); ok && not.Op == token.NOT {
		cond, want = not.X, 1
	}
	call, ok := cond.(*ssa.Call)
	if !ok || succ != want {
		return st
	}
	o, _ := classify(call.Common())
	if o != opTryLock && o != opTryRLock {
		return st
	}
	p, ok := fa.lockTarget(call.Common())
	if !ok {
		return st
	}
	return st.with(Held{Lock: p, Read: o == opTryRLock, CS: fa.csOf(call, p)})
}

// csOf returns the critical-section id of the acquisition of lock by
// instr: a Lock, a successful TryLock, or a call of a lock helper.
func (fa *funcAnalysis) csOf(instr ssa.Instruction, lock Path) int {
	k := callLock{instr, lock.Key()}
	if id, ok := fa.acquireCS[k]; ok {
		return id
	}
	id := fa.newCS()
	fa.acquireCS[k] = id
	fa.acquireAt[id] = acquisition{instr, lock}
	return id
}

func (fa *funcAnalysis) transfer(instr ssa.Instruction, st lockState, record bool) lockState {
	switch instr := instr.(type) {
	case *ssa.Call:
		c := instr.Common()
		o, _ := classify(c)
		switch o {
		case opLock, opRLock:
			if p, ok := fa.lockTarget(c); ok {
				return st.with(Held{Lock: p, Read: o == opRLock, CS: fa.csOf(instr, p)})
			}
		case opUnlock, opRUnlock:
			if p, ok := fa.lockTarget(c); ok {
				out, h, found := st.without(p.Key())
				switch {
				case !record:
				case found:
					fa.releaseAt[h.CS] = append(fa.releaseAt[h.CS], instr.Pos())
				case fa.condReleased(instr.Block(), p):
				case p.Root.Kind == RootParam || p.Root.Kind == RootGlobal:
					fa.unheldReleases = append(fa.unheldReleases, p)
				}
				return out
			}
		case opOther:
			return fa.applyCalleeLocks(instr, st, record)
		}
	case *ssa.Defer:
		o, _ := classify(instr.Common())
		if (o == opLock || o == opRLock) && record {
			// "mu.RUnlock(); defer mu.RLock()": the function returns
			// holding what its caller held.
			if p, ok := fa.lockTarget(instr.Common()); ok {
				fa.deferredAcquireKeys[p.Key()] = true
			}
		}
		if (o == opUnlock || o == opRUnlock) && record {
			if p, ok := fa.lockTarget(instr.Common()); ok {
				fa.deferredKeys[p.Key()] = true
			}
		}
	}
	return st
}

// applyCalleeLocks applies the Acquires and Releases of a lock helper.
func (fa *funcAnalysis) applyCalleeLocks(call *ssa.Call, st lockState, record bool) lockState {
	callee, sum := fa.calleeSummary(call.Common())
	if sum == nil || (len(sum.Acquires) == 0 && len(sum.Releases) == 0) {
		return st
	}
	for _, l := range sum.Releases {
		if p, ok := fa.mapPath(call.Common(), callee, l); ok {
			var h Held
			var found bool
			st, h, found = st.without(p.Key())
			if found && record {
				fa.releaseAt[h.CS] = append(fa.releaseAt[h.CS], call.Pos())
			}
		}
	}
	for _, l := range sum.Acquires {
		if p, ok := fa.mapPath(call.Common(), callee, l); ok {
			st = st.with(Held{Lock: p, CS: fa.csOf(call, p)})
		}
	}
	return st
}
