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
// answer is the same. A variable that only one goroutine accesses (a
// goroutine's own state, in the trace's shared address space) is ruled
// out the same way, by the search's condition that the interleaved
// accesses are another goroutine's.

// computeGuards sets ix.guard: per variable, the locks every access to it
// holds for writing, nil if none; and ix.owned: whether one goroutine
// makes every access to it.
func (ix *patIndex) computeGuards() {
	n := len(ix.vars)
	guard := make([][]trace.ObjID, n)
	state := make([]uint8, n) // 0 unseen, 1 guarded so far, 2 unguarded
	last := make([]LocksetID, n)
	owner := make([]uint32, n) // 1 + the goroutine of its accesses, 0 before the first
	owned := make([]bool, n)
	for i := range ix.acc {
		a := &ix.acc[i]
		v := a.v
		switch owner[v] {
		case 0:
			owner[v], owned[v] = a.g+1, true
		case a.g + 1:
		default:
			owned[v] = false
		}
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
	ix.guard, ix.owned = guard, owned
	ix.anyGuard = slices.ContainsFunc(guard, func(g []trace.ObjID) bool { return g != nil })
}

// pairOwners records, per ordered pair of variables (dense indices), the
// goroutine whose atomic-set frames are on it, or that the frames of
// several goroutines are: a table when the pairs are few enough, a map
// otherwise. An inner pair is of use only to the frames of another
// goroutine on its variables.
type pairOwners struct {
	n     uint64
	dense []uint32 // per pair: 0 none, g+1, or ownersMany
	m     map[uint64]uint32
}

// ownersMany marks a pair with frames of several goroutines.
const ownersMany = ^uint32(0)

func newPairOwners(vars int) *pairOwners {
	n := uint64(vars)
	if n*n <= 1<<20 {
		return &pairOwners{n: n, dense: make([]uint32, n*n)}
	}
	return &pairOwners{n: n, m: make(map[uint64]uint32)}
}

// add records a frame of goroutine g on (x, y).
func (s *pairOwners) add(x, y, g uint32) {
	k := s.key(x, y)
	switch v := s.get(k); v {
	case 0:
		s.set(k, g+1)
	case g + 1, ownersMany:
	default:
		s.set(k, ownersMany)
	}
}

// otherThan reports whether a goroutine other than g has frames on
// (x, y).
func (s *pairOwners) otherThan(x, y, g uint32) bool {
	v := s.get(s.key(x, y))
	return v != 0 && v != g+1
}

// key is the place of (x, y) in the table, or its key in the map.
func (s *pairOwners) key(x, y uint32) uint64 {
	if s.dense != nil {
		return uint64(x)*s.n + uint64(y)
	}
	return uint64(x)<<32 | uint64(y)
}

func (s *pairOwners) get(k uint64) uint32 {
	if s.dense != nil {
		return s.dense[k]
	}
	return s.m[k]
}

func (s *pairOwners) set(k uint64, v uint32) {
	if s.dense != nil {
		s.dense[k] = v
	} else {
		s.m[k] = v
	}
}

// guarded reports whether variable v has a guard or one goroutine makes
// all its accesses (computeGuards): then no race on it exists.
func (ix *patIndex) guarded(v uint32) bool {
	return ix.guard != nil && (ix.guard[v] != nil || ix.owned[v])
}

// gapHolds reports whether goroutine gi holds, in each of its lock states
// st1 to st2 (glog[gi][st1 : st2+1]), a lock that guards variable x or
// variable y, or whether only one goroutine accesses x or y: then no
// access of another goroutine to x or y can run between them.
func (ix *patIndex) gapHolds(gi, st1, st2 uint32, x, y uint32) bool {
	if ix.guard == nil {
		return false
	}
	if ix.owned[x] || ix.owned[y] {
		return true
	}
	if ix.guard[x] == nil && ix.guard[y] == nil {
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
