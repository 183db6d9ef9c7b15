package predict

import (
	"slices"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file finds the variables that one lock guards throughout the trace,
// so that the pattern search can skip what that lock rules out before
// enumerating it. The search's hybrid constraint (PECAN,
// shared/seeds/003_50220ead9b146295.txt, section 4.2) lets two points of
// different goroutines coexist only if their lock states do
// (patSearch.compat): a lock held at both, for writing at one, excludes
// them. If every access to x holds lock L for writing, then no race on x
// exists, and no access of another goroutine to x can run where a
// goroutine holds L: a triplet slot or an atomic-set frame on x whose
// every lock state holds L has no interleaved access. The search would
// find that out per pair of groups and per member, at a cost that grows
// with the variables and their groups though nothing is found (a long
// run of correctly locked code over many objects is the common case);
// here it is found once per variable and once per slot or frame, and the
// answer is the same.

// computeGuards sets ix.guard: per variable, the locks every access to it
// holds for writing, nil if none.
func (ix *patIndex) computeGuards() {
	n := len(ix.vars)
	guard := make([][]trace.ObjID, n)
	state := make([]uint8, n) // 0 unseen, 1 guarded so far, 2 unguarded
	last := make([]LocksetID, n)
	for i := range ix.acc {
		a := &ix.acc[i]
		v := a.v
		if state[v] == 2 {
			continue
		}
		ls := ix.locks.HistoryLockset(a.hist)
		if state[v] == 1 && ls == last[v] {
			continue
		}
		last[v] = ls
		held := ix.locks.Locks(ls)
		if state[v] == 0 {
			state[v] = 1
			for _, h := range held {
				if h.Mode == ModeWrite {
					guard[v] = append(guard[v], h.Obj)
				}
			}
		} else {
			guard[v] = slices.DeleteFunc(guard[v], func(l trace.ObjID) bool {
				return !slices.Contains(held, LockHold{Obj: l, Mode: ModeWrite})
			})
		}
		if len(guard[v]) == 0 {
			state[v], guard[v] = 2, nil
		}
	}
	ix.guard = guard
	ix.anyGuard = slices.ContainsFunc(guard, func(g []trace.ObjID) bool { return g != nil })
}

// guarded reports whether variable v has a guard (computeGuards).
func (ix *patIndex) guarded(v uint32) bool { return ix.guard != nil && ix.guard[v] != nil }

// gapHolds reports whether goroutine gi holds, in each of its lock states
// st1 to st2 (glog[gi][st1 : st2+1]), a lock that guards variable x or
// variable y: then no access of another goroutine to x or y can run
// between them.
func (ix *patIndex) gapHolds(gi, st1, st2 uint32, x, y uint32) bool {
	if ix.guard == nil || ix.guard[x] == nil && ix.guard[y] == nil {
		return false
	}
	gap := ix.glog[gi][st1 : st2+1]
	holds := func(l trace.ObjID) bool {
		for _, h := range gap {
			if !slices.ContainsFunc(ix.locks.Locks(ix.locks.HistoryLockset(h)), func(lh LockHold) bool { return lh.Obj == l }) {
				return false
			}
		}
		return true
	}
	return slices.ContainsFunc(ix.guard[x], holds) || slices.ContainsFunc(ix.guard[y], holds)
}
