package predict

import (
	"encoding/binary"
	"slices"
)

// This file searches atomic-set serializability violations (PECAN,
// shared/seeds/003_50220ead9b146295.txt, section 3, "ASV"): PECAN treats
// every region as a unit of work and the variables a region accesses as one
// atomic set. A violation is a region instance u that accesses x and then y,
// and a region instance u' of another goroutine that accesses both between
// them, with a conflict on each side: u -> u' on x and u' -> u on y, so no
// serial order of u and u' explains the run. This is PECAN's Figure 2 shape
// (t1-t2-t2-t1 over s1-s1-s2-s2).
//
// The shapes are not listed by hand but derived (patterns2_test.go,
// TestDeriveAtomicSetPatterns): enumerating every interleaving of two
// units' four accesses over x and y and keeping the ones that are not
// conflict-serializable and contain no single-variable triplet gives these
// problematic patterns, written in schedule order with u's accesses outside
// and u''s inside; x is the variable u accesses first:
//
//	nested (u' runs inside u), 18 patterns, u' in either order:
//	  Wu(x) Wu'(x) Wu'(y) Wu(y)    Wu(x) Wu'(y) Wu'(x) Wu(y)
//	  Wu(x) Ru'(x) Ru'(y) Wu(y)    Wu(x) Ru'(y) Ru'(x) Wu(y)
//	  Ru(x) Wu'(x) Wu'(y) Ru(y)    Ru(x) Wu'(y) Wu'(x) Ru(y)
//	  and the mixed ones: Ru(x) Wu'(x) {Wu'(y) | Ru'(y)} ... see docs/predict.md
//	crossed (u and u' each interleave the other): 8 patterns.
//
// The six nested patterns with a uniform pair of operations on each side
// are Vaziri, Tip and Dolby's patterns 6 to 11 (POPL 2006); with their five
// single-variable patterns (the triplets of pattern.go) they make the
// eleven. docs/predict.md lists the full derivation and how the others
// relate. The search below finds every nested pattern; crossed ones are
// reported as the single-variable triplets or races they contain when
// those exist, and are otherwise not searched.

// maxASVAccesses bounds the accesses of a region instance that the
// atomic-set search considers; larger instances (rare in the regions avcheck
// infers) would make the pair enumeration quadratic per instance.
const maxASVAccesses = 16

// ushape is the signature of a whole region instance: its accesses of all
// variables, with the lock states between them.
type ushape struct {
	g      uint16
	vars   []uint32
	sites  []uint32
	writes []bool
	hists  []HistoryID
	gaps   [][]HistoryID // gaps[i]: lock states from access i to access i+1
	varset []uint32      // sorted distinct vars
	insts  [][]uint32    // instances with this shape, each as its accesses
}

// unitShapes groups region instances that access at least two variables
// (and at most maxASVAccesses times) by shape.
func (ix *patIndex) unitShapes() []*ushape {
	perInst := make(map[uint32][]uint32)
	var order []uint32
	for ai := range ix.acc {
		a := &ix.acc[ai]
		if a.inst == 0 {
			continue
		}
		l, ok := perInst[a.inst]
		if !ok {
			order = append(order, a.inst)
		}
		if len(l) > maxASVAccesses {
			continue
		}
		perInst[a.inst] = append(l, uint32(ai))
	}
	byKey := make(map[string]*ushape)
	var out []*ushape
	var key []byte
	for _, in := range order {
		l := perInst[in]
		if len(l) < 2 || len(l) > maxASVAccesses {
			continue
		}
		v0 := ix.acc[l[0]].v
		multi := false
		for _, ai := range l {
			if ix.acc[ai].v != v0 {
				multi = true
				break
			}
		}
		if !multi {
			continue
		}
		first := &ix.acc[l[0]]
		key = key[:0]
		key = binary.AppendUvarint(key, uint64(first.g))
		for i, ai := range l {
			a := &ix.acc[ai]
			key = binary.AppendUvarint(key, uint64(a.v))
			key = binary.AppendUvarint(key, uint64(ix.t.Events[a.ev].Site))
			key = append(key, opLetter(a.write)[0])
			if i+1 < len(l) {
				for _, h := range ix.gapStates(a.g, a, &ix.acc[l[i+1]]) {
					key = binary.AppendUvarint(key, uint64(h)+1)
				}
				key = append(key, 0)
			}
		}
		sh, ok := byKey[string(key)]
		if !ok {
			sh = &ushape{g: first.g}
			for i, ai := range l {
				a := &ix.acc[ai]
				sh.vars = append(sh.vars, a.v)
				sh.sites = append(sh.sites, uint32(ix.t.Events[a.ev].Site))
				sh.writes = append(sh.writes, a.write)
				sh.hists = append(sh.hists, a.hist)
				if i+1 < len(l) {
					sh.gaps = append(sh.gaps, ix.gapStates(a.g, a, &ix.acc[l[i+1]]))
				}
			}
			sh.varset = slices.Compact(slices.Sorted(slices.Values(sh.vars)))
			byKey[string(key)] = sh
			out = append(out, sh)
		}
		sh.insts = append(sh.insts, l)
	}
	return out
}

// shareTwo reports whether two sorted variable sets have two members in
// common.
func shareTwo(a, b []uint32) bool {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			if n == 2 {
				return true
			}
			i++
			j++
		}
	}
	return false
}

// atomicSets finds the nested atomic-set violations.
func (s *patSearch) atomicSets() {
	shapes := s.ix.unitShapes()
	for _, u := range shapes {
		for _, w := range shapes {
			if u.g == w.g || !shareTwo(u.varset, w.varset) {
				continue
			}
			s.atomicSetPair(u, w)
		}
	}
}

// atomicSetPair enumerates the patterns of unit shape u (outside) and w
// (inside). The pair a1, a2 of u is tight: no access of u between them
// touches x or y, so each violation is reported once, by the accesses that
// frame the interleaved ones.
func (s *patSearch) atomicSetPair(u, w *ushape) {
	for i := range u.vars {
		for j := i + 1; j < len(u.vars); j++ {
			x, y := u.vars[i], u.vars[j]
			if x == y {
				continue
			}
			tight := true
			for k := i + 1; k < j; k++ {
				if u.vars[k] == x || u.vars[k] == y {
					tight = false
					break
				}
			}
			if !tight {
				continue
			}
			var gap []HistoryID
			for k := i; k < j; k++ {
				gap = append(gap, u.gaps[k]...)
			}
			for bx := range w.vars {
				if w.vars[bx] != x || !(u.writes[i] || w.writes[bx]) {
					continue
				}
				if !s.ix.compatibleAny(gap, w.hists[bx]) {
					continue
				}
				for by := range w.vars {
					if w.vars[by] != y || !(u.writes[j] || w.writes[by]) {
						continue
					}
					if !s.ix.compatibleAny(gap, w.hists[by]) {
						continue
					}
					s.atomicSetPairs(u, w, i, j, bx, by)
				}
			}
		}
	}
}

// atomicSetPairs sweeps the instances of w against those of u. For an
// instance of w, the instances of u whose a1 its first access need not
// follow form a prefix (b does not happen before a1), and those whose a2
// need not precede its last access a suffix (a2 does not happen before b);
// both bounds move forward with w's instance.
func (s *patSearch) atomicSetPairs(u, w *ushape, i, j, bx, by int) {
	ix := s.ix
	bf, bl := min(bx, by), max(bx, by)
	lo, hi := 0, 0
	var c *patCand
	for _, win := range w.insts {
		first, last := &ix.acc[win[bf]], &ix.acc[win[bl]]
		for hi < len(u.insts) && !ix.hb(first, &ix.acc[u.insts[hi][i]]) {
			hi++
		}
		for lo < hi && ix.hb(&ix.acc[u.insts[lo][j]], last) {
			lo++
		}
		if lo >= hi {
			continue
		}
		if c == nil {
			s.key = s.key[:0]
			s.key = append(s.key, 'a')
			for _, x := range []struct {
				site  uint32
				write bool
			}{{u.sites[i], u.writes[i]}, {w.sites[bf], w.writes[bf]}, {w.sites[bl], w.writes[bl]}, {u.sites[j], u.writes[j]}} {
				s.key = binary.AppendUvarint(s.key, uint64(x.site))
				s.key = append(s.key, opLetter(x.write)[0])
			}
			pat := opLetter(u.writes[i]) + "u(x)-" + opLetter(w.writes[bf]) + "u'(" + xy(bf == bx) + ")-" +
				opLetter(w.writes[bl]) + "u'(" + xy(bl == bx) + ")-" + opLetter(u.writes[j]) + "u(y)"
			c = s.get(s.key, func() Finding {
				return Finding{Kind: KindAtomicSet, Level: LevelPredicted, Pattern: pat}
			})
		}
		c.f.Count += hi - lo
		// The instance of u just before w's in the trace is the closest.
		k := lo + sortSearch(hi-lo, func(k int) bool { return ix.acc[u.insts[lo+k][i]].ev > first.ev })
		for _, m := range [2]int{k - 1, k} {
			if m >= lo && m < hi {
				c.offer([]uint32{ix.acc[u.insts[m][i]].ev, first.ev, last.ev, ix.acc[u.insts[m][j]].ev})
			}
		}
	}
}

func xy(isX bool) string {
	if isX {
		return "x"
	}
	return "y"
}
