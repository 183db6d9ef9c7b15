package regions

import (
	"fmt"
	"go/types"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// summarize builds the function's Fact from its accesses: those its
// callers can see, with the locks held at them (all acquired by the
// function itself, since analysis starts with no lock held), the results
// they flow into, and, for writes, the parameters they are made from.
func (fa *funcAnalysis) summarize() *Summary {
	f := fa.info
	closure := fa.fn.Parent() != nil
	s := &Summary{Results: make([][]int, fa.fn.Signature.Results().Len())}
	paramFlows := make([]*flow, len(fa.fn.Params))
	seen := map[string]int{}
	for _, a := range f.Accesses {
		switch a.Path.Root.Kind {
		case RootParam, RootGlobal:
		case RootFree:
			if !closure {
				continue
			}
		default:
			continue
		}
		sa := SummaryAccess{Path: a.Path, Kind: a.Kind, Atomic: a.Atomic, Sync: a.Sync, Rechecked: a.Rechecked, Refreshed: a.Refreshed, Claimed: a.Claimed, Decides: a.Decides}
		for _, h := range a.Held {
			if h.Lock.Root.Kind == RootLocal {
				continue
			}
			sa.Locks = append(sa.Locks, SummaryLock{Lock: h.Lock, Read: h.Read})
		}
		if a.Kind == Write {
			for i, p := range fa.fn.Params {
				if paramFlows[i] == nil {
					paramFlows[i] = fa.flowFrom([]ssa.Value{p}, true)
				}
				if data, _ := paramFlows[i].feeds(a); data {
					sa.Params = append(sa.Params, i)
				}
			}
		}
		var resultsOf []int
		if a.Kind == Read {
			results := fa.fn.Signature.Results()
			for r := range f.flowOf(a).results {
				// An error reports how the call went, not the state it
				// read: "if err != nil { return }" checks no state.
				if !isError(results.At(r).Type()) {
					resultsOf = append(resultsOf, r)
				}
			}
			slices.Sort(resultsOf)
		}
		key := summaryKey(sa)
		idx, dup := seen[key]
		if !dup {
			if len(s.Accesses) >= maxSummaryAccesses {
				continue
			}
			idx = len(s.Accesses)
			seen[key] = idx
			s.Accesses = append(s.Accesses, sa)
		}
		for _, r := range resultsOf {
			if !slices.Contains(s.Results[r], idx) {
				s.Results[r] = append(s.Results[r], idx)
			}
		}
	}
	for _, r := range s.Results {
		slices.Sort(r)
	}
	s.Locks = fa.locksTaken()
	s.Callbacks = fa.callbacks()
	s.Escapes = fa.escapingParams()
	s.Fresh = fa.freshResults()
	s.Acquires = fa.heldAtExit()
	for _, l := range fa.unheldReleases {
		if !fa.deferredAcquireKeys[l.Key()] {
			s.Releases = append(s.Releases, l)
		}
	}
	return s
}

func summaryKey(sa SummaryAccess) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %s %v %v %v %v %v %v", sa.Kind, sa.Path.Key(), sa.Atomic, sa.Sync, sa.Rechecked, sa.Refreshed, sa.Claimed, sa.Decides, sa.Params)
	for _, l := range sa.Locks {
		fmt.Fprintf(&b, " %s/%v", l.Lock.Key(), l.Read)
	}
	return b.String()
}

// heldAtExit returns the locks held on every return, other than those a
// deferred unlock releases: the function is a lock helper.
func (fa *funcAnalysis) heldAtExit() []Path {
	var exit lockState
	first := true
	fa.reachedReturns(func(ret *ssa.Return, st lockState) {
		if first {
			exit, first = st, false
		} else {
			exit = fa.merge(ret.Block().Index, exit, st)
		}
	})
	var out []Path
	for _, h := range exit {
		if !fa.deferredKeys[h.Lock.Key()] && (h.Lock.Root.Kind == RootParam || h.Lock.Root.Kind == RootGlobal) {
			out = append(out, h.Lock)
		}
	}
	return out
}

// reachedReturns calls f with each return of the function that the lock
// analysis reached, and the locks held before it.
func (fa *funcAnalysis) reachedReturns(f func(ret *ssa.Return, st lockState)) {
	for _, b := range fa.fn.Blocks {
		if len(b.Instrs) == 0 {
			continue
		}
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			if st, reached := fa.heldBefore[ret]; reached {
				f(ret, st)
			}
		}
	}
}

func isError(t types.Type) bool {
	return types.Identical(t, types.Universe.Lookup("error").Type())
}

// locksTaken returns the locks the function acquires, itself or through
// its callees, that its callers can name, in a deterministic order.
func (fa *funcAnalysis) locksTaken() []Path {
	byKey := map[string]Path{}
	for _, acq := range fa.acquireAt {
		byKey[acq.lock.Key()] = acq.lock
	}
	for _, b := range fa.fn.Blocks {
		for _, instr := range b.Instrs {
			call, ok := instr.(*ssa.Call)
			if !ok {
				continue
			}
			if _, reached := fa.heldBefore[call]; !reached {
				continue
			}
			if o, _ := classify(call.Common()); o != opOther {
				continue // a lock operation itself, already counted
			}
			callee, sum := fa.calleeSummary(call.Common())
			if sum == nil {
				continue
			}
			for _, l := range sum.Locks {
				if p, ok := fa.mapPath(call.Common(), callee, l); ok {
					byKey[p.Key()] = p
				}
			}
		}
	}
	var out []Path
	for _, p := range byKey {
		if p.Root.Kind == RootParam || p.Root.Kind == RootGlobal || p.Root.Kind == RootFree && fa.fn.Parent() != nil {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// callbacks returns the parameters of function type that the function
// only calls in its own goroutine, directly or by passing them to a
// callee that does.
func (fa *funcAnalysis) callbacks() []int {
	var out []int
	for i, p := range fa.fn.Params {
		if _, ok := p.Type().Underlying().(*types.Signature); !ok {
			continue
		}
		if fa.onlyCalled(p) {
			out = append(out, i)
		}
	}
	return out
}

func (fa *funcAnalysis) onlyCalled(p *ssa.Parameter) bool {
	refs := p.Referrers()
	if refs == nil {
		return false
	}
	for _, r := range *refs {
		c, ok := r.(*ssa.Call) // not go or defer: those run it elsewhere or later
		if !ok {
			return false
		}
		if c.Call.Value == p && !slices.Contains(c.Call.Args, ssa.Value(p)) {
			continue
		}
		_, sum := fa.calleeSummary(c.Common())
		if sum == nil {
			return false
		}
		for j, a := range c.Call.Args {
			if a == p && !slices.Contains(sum.Callbacks, j) {
				return false
			}
		}
	}
	return true
}
