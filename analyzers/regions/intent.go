package regions

import (
	"go/token"
	"sort"

	"github.com/avcheck/avcheck/internal/intent"
	"golang.org/x/tools/go/ssa"
)

// This file is avcheck's one rule of intent: which groups of accesses are
// meant to run as one indivisible step. Proximity (BEST section V,
// shared/seeds/002_42168b820bf119f6.txt) proposes a region; evidence
// confirms it. Correct Go code is full of adjacent calls to methods that
// each take their own lock (c.Inc(); c.Get()), and none of them is meant
// to be atomic with the next. The static checks report a split only where
// Evidence links its accesses; the recorder writes each region's Intent
// into the trace, and the predictors report a violation of a region that
// has none at level predicted at most.

// Intent is the evidence that a region is meant to be atomic, with the
// two accesses it links for the kinds that follow a value (WriteBack,
// Branch, ReadPair).
type Intent struct {
	Evidence intent.Evidence
	From, To *Access
}

// Confirmed reports whether the intent makes its region intended.
func (in Intent) Confirmed() bool { return in.Evidence.Confirms() }

// Evidence returns the evidence that from and to, two accesses of f with
// from first, are meant to be one step: the value from reads is written
// by to (WriteBack), decides whether to runs (Branch), or is used together
// with the value to reads (ReadPair); intent.None if nothing links them.
// Only a read gives evidence, and not a read of a synchronisation object
// (a channel, a mutex), whose value is not data; an atomic load does.
func (f *Func) Evidence(from, to *Access) intent.Evidence {
	if from.Kind != Read || from.Sync && from.Atomic == "" || from.Instr == to.Instr {
		return intent.None
	}
	data, control := f.Feeds(from, to)
	switch {
	case data:
		return intent.WriteBack
	case control:
		return intent.Branch
	case to.Kind == Read && !(to.Sync && to.Atomic == "") && f.usedTogether(from, to):
		return intent.ReadPair
	}
	return intent.None
}

// usedTogether reports whether the values a and b read meet in one
// computation: both operands of an operation (a comparison, arithmetic),
// or results returned together. A call's arguments are not such a meeting
// (log.Print(a, b) only passes them on), though what a call returns is
// taken to carry what it was given.
func (f *Func) usedTogether(a, b *Access) bool {
	fa, fb := f.flowOf(a), f.flowOf(b)
	if len(fa.vals) == 0 || len(fb.vals) == 0 {
		return false
	}
	for v := range fb.vals {
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, instr := range *refs {
			switch in := instr.(type) {
			case *ssa.BinOp:
				if fa.vals[in.X] && fb.vals[in.Y] || fa.vals[in.Y] && fb.vals[in.X] {
					return true
				}
			case *ssa.Return:
				for _, r := range in.Results {
					if fa.vals[r] {
						return true
					}
				}
			}
		}
	}
	return false
}

// maxEvidencePairs bounds the pairs of accesses one proximity region's
// evidence is looked for in; a longer region is taken whole when its
// first pairs give none.
const maxEvidencePairs = 4096

// confirm turns a proximity group into the regions its evidence
// confirms: each stretch from a read to the later access it is linked
// with, overlapping stretches merged, as a region of its own with the
// first evidence found in it. A group without evidence stays one region
// with intent.None: a proposal, whose violations are shown at level
// predicted at most.
func (fa *funcAnalysis) confirm(group []*Access) []*Region {
	type span struct {
		pos, end token.Pos
		in       Intent
	}
	var spans []span
	pairs := 0
	for i, a := range group {
		for _, b := range group[i+1:] {
			if pairs++; pairs > maxEvidencePairs {
				break
			}
			if a.Pos == b.Pos {
				// One call's accesses, or one statement's (c.n++): the
				// callee's regions, or the statement itself, hold them.
				continue
			}
			if ev := fa.info.Evidence(a, b); ev.Confirms() {
				spans = append(spans, span{a.Pos, b.Pos, Intent{ev, a, b}})
			}
		}
	}
	if len(spans) == 0 {
		return []*Region{{Kind: Proximity, Func: fa.fn, Pos: group[0].Pos, End: group[len(group)-1].Pos,
			Accesses: group, Intent: Intent{Evidence: intent.None}}}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].pos < spans[j].pos })
	var out []*Region
	for _, s := range spans {
		if n := len(out); n > 0 && s.pos <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.end)
			continue
		}
		out = append(out, &Region{Kind: Proximity, Func: fa.fn, Pos: s.pos, End: s.end, Intent: s.in})
	}
	for _, r := range out {
		for _, a := range group {
			if r.Pos <= a.Pos && a.Pos <= r.End {
				r.Accesses = append(r.Accesses, a)
			}
		}
	}
	return out
}

// dropOverlapped removes the proposals (regions without evidence) that
// overlap a confirmed region of the function: the recorder joins a
// function's overlapping regions into one, and a proposal joined to a
// confirmed region would lend it intent it does not have.
func dropOverlapped(rs []*Region) []*Region {
	out := rs[:0]
	for _, r := range rs {
		if !r.Intent.Confirmed() && overlapsConfirmed(r, rs) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func overlapsConfirmed(r *Region, rs []*Region) bool {
	for _, o := range rs {
		if o != r && o.Intent.Confirmed() && o.Pos <= r.End && r.Pos <= o.End {
			return true
		}
	}
	return false
}
