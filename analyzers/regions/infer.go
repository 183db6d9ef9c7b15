package regions

import (
	"go/ast"
	"go/token"
	"slices"
	"sort"

	"github.com/avcheck/avcheck/internal/intent"
	"golang.org/x/tools/go/ssa"
)

// regions infers the function's intended atomic regions: annotated ones,
// lock scopes, and proximity regions.
func (fa *funcAnalysis) regions() []*Region {
	var out []*Region
	out = append(out, fa.annotatedRegions()...)
	out = append(out, fa.lockRegions()...)
	out = append(out, fa.proximityRegions()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return nestProposals(out)
}

// inside returns the accesses of the function within [pos, end).
func (fa *funcAnalysis) inside(pos, end token.Pos) []*Access {
	var as []*Access
	for _, a := range fa.sortedAccesses() {
		if pos <= a.Pos && a.Pos < end {
			as = append(as, a)
		}
	}
	return as
}

func (fa *funcAnalysis) sortedAccesses() []*Access {
	as := append([]*Access(nil), fa.info.Accesses...)
	sort.SliceStable(as, func(i, j int) bool { return as[i].Pos < as[j].Pos })
	return as
}

func (fa *funcAnalysis) annotatedRegions() []*Region {
	syntax := fa.fn.Syntax()
	if syntax == nil {
		return nil
	}
	var out []*Region
	if decl, ok := syntax.(*ast.FuncDecl); ok && fa.ps.ann.AtomicFuncs[decl] {
		out = append(out, &Region{Kind: Annotated, Func: fa.fn, Pos: decl.Body.Lbrace, End: decl.Body.Rbrace,
			Accesses: fa.inside(decl.Body.Lbrace, decl.Body.Rbrace), Intent: Intent{Evidence: intent.Annotation}})
	}
	for b := range fa.ps.ann.AtomicBlocks {
		if b.Pos() < syntax.Pos() || b.End() > syntax.End() || fa.inClosure(b.Pos()) {
			continue
		}
		out = append(out, &Region{Kind: Annotated, Func: fa.fn, Pos: b.Lbrace, End: b.Rbrace,
			Accesses: fa.inside(b.Lbrace, b.Rbrace), Intent: Intent{Evidence: intent.Annotation}})
	}
	return out
}

// inClosure reports whether pos lies in a function literal of fa.fn,
// which is a function of its own.
func (fa *funcAnalysis) inClosure(pos token.Pos) bool {
	for _, anon := range fa.fn.AnonFuncs {
		if s := anon.Syntax(); s != nil && s.Pos() <= pos && pos < s.End() {
			return true
		}
	}
	return false
}

// lockRegions returns one region per outermost critical section: from
// the acquisition to the last release of it, or, when the function
// defers a release of the lock, to the last return reached holding it
// (the deferred release runs there). A critical section that an explicit
// Unlock ends before every return ends there, though an Unlock is
// deferred: "mu.Lock(); defer mu.Unlock(); ...; mu.Unlock(); <-ch;
// mu.Lock(); return" has two, and a wait between them.
func (fa *funcAnalysis) lockRegions() []*Region {
	byCS := map[int][]*Access{}
	for _, a := range fa.sortedAccesses() {
		if len(a.Held) > 0 {
			byCS[a.Held[0].CS] = append(byCS[a.Held[0].CS], a)
		}
	}
	var out []*Region
	for cs, acq := range fa.acquireAt {
		if len(fa.heldBefore[acq.instr]) > 0 {
			continue // nested: it belongs to the outermost region
		}
		lock := acq.lock
		pos, _ := fa.locate(lock, acq.instr.Pos())
		end := pos
		for _, r := range fa.releaseAt[cs] {
			if r > end {
				end = r
			}
		}
		if fa.deferredKeys[lock.Key()] {
			// Held at the function's last return, or released by
			// nothing (a function that never returns, or only
			// panics): the deferred release ends it at the end of the
			// function, as the recorders see it.
			r, last := fa.returnHolding(cs)
			if last || !r.IsValid() && len(fa.releaseAt[cs]) == 0 {
				if s := fa.fn.Syntax(); s != nil {
					r = s.End()
				}
			}
			end = max(end, r)
		}
		out = append(out, &Region{Kind: LockScope, Func: fa.fn, Pos: pos, End: end, Lock: &lock, Accesses: byCS[cs],
			Intent: Intent{Evidence: intent.CriticalSection}})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// returnHolding returns the position of the last return of the function
// reached holding critical section cs (token.NoPos if none is), and
// whether it is the function's last return. A return without a position
// (falling off the end) is at the end of the function.
func (fa *funcAnalysis) returnHolding(cs int) (pos token.Pos, last bool) {
	var lastRet token.Pos
	fa.reachedReturns(func(ret *ssa.Return, st lockState) {
		p := ret.Pos()
		if !p.IsValid() {
			if s := fa.fn.Syntax(); s != nil {
				p = s.End()
			}
		}
		lastRet = max(lastRet, p)
		if slices.ContainsFunc(st, func(h Held) bool { return h.CS == cs }) {
			pos = max(pos, p)
		}
	})
	return pos, pos.IsValid() && pos == lastRet
}

// proximityRegions proposes regions by code proximity, following BEST
// section V (shared/seeds/002_42168b820bf119f6.txt): consecutive shared
// accesses at most maxd lines apart, with no operation that orders
// goroutines between them, trimmed so that the first and last are to
// ordinary variables rather than synchronisation objects. A proposal is
// not a confirmed region: the stretches that evidence links (intent.go)
// are the regions with intent, and a proposal that overlaps none of them
// stays one with intent.None (nestProposals widens the others to contain
// the confirmed regions they overlap).
func (fa *funcAnalysis) proximityRegions() []*Region {
	fset := fa.ps.pass.Fset
	line := func(p token.Pos) int { return fset.Position(p).Line }
	syncs := fa.info.SyncOps
	syncBetween := func(a, b token.Pos) bool {
		i := sort.Search(len(syncs), func(i int) bool { return syncs[i].Pos > a })
		return i < len(syncs) && syncs[i].Pos < b
	}
	trim := func(group []*Access) []*Access {
		for len(group) > 0 && group[0].Sync {
			group = group[1:]
		}
		for len(group) > 0 && group[len(group)-1].Sync {
			group = group[:len(group)-1]
		}
		return group
	}
	var out []*Region
	var seg, group []*Access
	flushGroup := func() {
		if g := trim(group); len(g) >= 2 && g[0].Pos != g[len(g)-1].Pos {
			out = append(out, &Region{Kind: Proximity, Func: fa.fn, Pos: g[0].Pos, End: g[len(g)-1].Pos,
				Accesses: g, Intent: Intent{Evidence: intent.None}})
		}
		group = nil
	}
	flushSeg := func() {
		flushGroup()
		if s := trim(seg); len(s) >= 2 {
			out = append(out, fa.confirmed(s)...)
		}
		seg = nil
	}
	for _, a := range fa.sortedAccesses() {
		if !a.Pos.IsValid() || fa.inClosure(a.Pos) {
			continue
		}
		if n := len(seg); n > 0 && syncBetween(seg[n-1].Pos, a.Pos) {
			flushSeg()
		}
		if n := len(group); n > 0 && line(a.Pos)-line(group[n-1].Pos) > fa.ps.cfg.MaxD {
			flushGroup()
		}
		seg = append(seg, a)
		group = append(group, a)
	}
	flushSeg()
	return out
}
