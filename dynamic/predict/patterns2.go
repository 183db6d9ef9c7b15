package predict

import (
	"encoding/binary"

	"github.com/avcheck/avcheck/dynamic/trace"
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
// The patterns are not listed by hand but derived (patterns2_test.go,
// TestDeriveAtomicSetPatterns): enumerating every interleaving of two
// units' four accesses over x and y (u the unit of the first access, x its
// variable) and keeping the ones that are not conflict-serializable and
// contain no single-variable triplet gives 27 patterns:
//
//	nested, u' inside u (18):
//	  Wu(x)-Wu'(x)-Wu'(y)-Wu(y)  Wu(x)-Wu'(y)-Wu'(x)-Wu(y)   (Vaziri 6, 7)
//	  Wu(x)-Ru'(x)-Ru'(y)-Wu(y)  Wu(x)-Ru'(y)-Ru'(x)-Wu(y)   (Vaziri 8, 9)
//	  Ru(x)-Wu'(x)-Wu'(y)-Ru(y)  Ru(x)-Wu'(y)-Wu'(x)-Ru(y)   (Vaziri 10, 11)
//	  Ru(x)-Wu'(x)-Wu'(y)-Wu(y)  Ru(x)-Wu'(y)-Wu'(x)-Wu(y)
//	  Ru(x)-Wu'(x)-Ru'(y)-Wu(y)  Ru(x)-Ru'(y)-Wu'(x)-Wu(y)
//	  Wu(x)-Wu'(x)-Wu'(y)-Ru(y)  Wu(x)-Wu'(y)-Wu'(x)-Ru(y)
//	  Wu(x)-Wu'(x)-Ru'(y)-Wu(y)  Wu(x)-Wu'(y)-Ru'(x)-Wu(y)
//	  Wu(x)-Ru'(x)-Wu'(y)-Wu(y)  Wu(x)-Ru'(y)-Wu'(x)-Wu(y)
//	  Wu(x)-Ru'(x)-Wu'(y)-Ru(y)  Wu(x)-Wu'(y)-Ru'(x)-Ru(y)
//	crossed, each unit inside the other's span (9):
//	  Wu(x)-Wu'(y)-Wu(y)-Wu'(x)  Wu(x)-Wu'(y)-Wu(y)-Ru'(x)  Wu(x)-Wu'(y)-Ru(y)-Wu'(x)
//	  Wu(x)-Wu'(y)-Ru(y)-Ru'(x)  Wu(x)-Ru'(y)-Wu(y)-Wu'(x)  Wu(x)-Ru'(y)-Wu(y)-Ru'(x)
//	  Ru(x)-Wu'(y)-Wu(y)-Wu'(x)  Ru(x)-Wu'(y)-Ru(y)-Wu'(x)  Ru(x)-Ru'(y)-Wu(y)-Wu'(x)
//
// The six nested patterns in which each unit's two accesses are of one
// kind are Vaziri, Tip and Dolby's two-location patterns (POPL 2006,
// patterns 6 to 11); with the five single-variable ones (the triplets of
// pattern.go, which the same enumeration over one variable yields) they
// make the eleven PECAN cites. The other twelve nested and the nine
// crossed interleavings are unserializable too: conflict serializability
// rejects them, Vaziri et al.'s list does not name them. The search below
// reports all eighteen nested patterns (PECAN's t1-t2-t2-t1 shape); a
// crossed one is not searched, and is reported only through the races or
// triplets it may contain. docs/predict.md has the same list.

// maxASVAccesses bounds the accesses of a region instance that the
// atomic-set search considers; larger instances (rare in the regions avcheck
// infers) would make the pair enumeration quadratic per instance.
const maxASVAccesses = 16

// ushape is the signature of a whole region instance: its accesses of all
// variables. Lock states are checked per pair of instances.
type ushape struct {
	g      uint16
	vars   []uint32
	sites  []trace.SiteID
	writes []bool
	insts  [][]uint32 // instances with this shape, each as its accesses
}

// innerKey describes two accesses of one region instance, on x and on y,
// as the inside of a nested pattern.
type innerKey struct {
	g      uint16
	x, y   uint32
	sx, sy trace.SiteID
	wx, wy bool
	xFirst bool
}

// innerGroup is the instances with the same innerKey, in program order,
// each as its access on x and its access on y.
type innerGroup struct {
	key   innerKey
	pairs [][2]uint32
}

// unitInstances returns the region instances that access at least two
// variables and at most maxASVAccesses times, each as its accesses, in
// program order per goroutine.
func (ix *patIndex) unitInstances() [][]uint32 {
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
	var out [][]uint32
	for _, in := range order {
		l := perInst[in]
		if len(l) < 2 || len(l) > maxASVAccesses {
			continue
		}
		for _, ai := range l[1:] {
			if ix.acc[ai].v != ix.acc[l[0]].v {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// unitShapes groups unit instances by shape.
func (ix *patIndex) unitShapes(units [][]uint32) []*ushape {
	byKey := make(map[string]*ushape)
	var out []*ushape
	var key []byte
	for _, l := range units {
		first := &ix.acc[l[0]]
		key = key[:0]
		key = binary.AppendUvarint(key, uint64(first.g))
		for _, ai := range l {
			a := &ix.acc[ai]
			key = binary.AppendUvarint(key, uint64(a.v))
			key = binary.AppendUvarint(key, uint64(ix.t.Events[a.ev].Site))
			key = append(key, opLetter(a.write)[0])
		}
		sh, ok := byKey[string(key)]
		if !ok {
			sh = &ushape{g: first.g}
			for _, ai := range l {
				a := &ix.acc[ai]
				sh.vars = append(sh.vars, a.v)
				sh.sites = append(sh.sites, ix.t.Events[a.ev].Site)
				sh.writes = append(sh.writes, a.write)
			}
			byKey[string(key)] = sh
			out = append(out, sh)
		}
		sh.insts = append(sh.insts, l)
	}
	return out
}

// innerGroups indexes every pair of accesses to two variables of the unit
// instances, by (x, y), for the outer accesses to look up.
func (ix *patIndex) innerGroups(units [][]uint32) map[[2]uint32][]*innerGroup {
	byKey := make(map[innerKey]*innerGroup)
	out := make(map[[2]uint32][]*innerGroup)
	for _, l := range units {
		for p := range l {
			for q := p + 1; q < len(l); q++ {
				if ix.acc[l[p]].v == ix.acc[l[q]].v {
					continue
				}
				for _, o := range [2][2]uint32{{l[p], l[q]}, {l[q], l[p]}} {
					bx, by := &ix.acc[o[0]], &ix.acc[o[1]]
					k := innerKey{
						g: bx.g, x: bx.v, y: by.v,
						sx: ix.t.Events[bx.ev].Site, sy: ix.t.Events[by.ev].Site,
						wx: bx.write, wy: by.write, xFirst: o[0] == l[p],
					}
					gr, ok := byKey[k]
					if !ok {
						gr = &innerGroup{key: k}
						byKey[k] = gr
						out[[2]uint32{k.x, k.y}] = append(out[[2]uint32{k.x, k.y}], gr)
					}
					pair := o
					if n := len(gr.pairs); n == 0 || gr.pairs[n-1] != pair {
						gr.pairs = append(gr.pairs, pair)
					}
				}
			}
		}
	}
	return out
}

// atomicSets finds the nested atomic-set violations.
func (s *patSearch) atomicSets() {
	ix := s.ix
	units := ix.unitInstances()
	if len(units) == 0 {
		return
	}
	inner := ix.innerGroups(units)
	for _, u := range ix.unitShapes(units) {
		s.atomicSetOuter(u, inner)
	}
}

// atomicSetOuter enumerates the patterns with unit shape u outside. The
// pair a1, a2 of u is tight: no access of u between them touches x or y,
// so each violation is reported once, by the accesses that frame the
// interleaved ones.
func (s *patSearch) atomicSetOuter(u *ushape, inner map[[2]uint32][]*innerGroup) {
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
			groups := inner[[2]uint32{x, y}]
			if len(groups) == 0 {
				continue
			}
			for _, gr := range groups {
				k := &gr.key
				if k.g == u.g || !(u.writes[i] || k.wx) || !(k.wy || u.writes[j]) {
					continue
				}
				s.atomicSetMatch(u, i, j, gr)
			}
		}
	}
}

// atomicSetMatch matches the instances of u against an inner group. For
// an instance of u, the inner instances whose first access need not
// precede a1 form a suffix (by program order) and those whose last access
// need not follow a2 a prefix: two binary searches bound them.
func (s *patSearch) atomicSetMatch(u *ushape, i, j int, gr *innerGroup) {
	ix := s.ix
	k := &gr.key
	fi, li := 1, 0 // index in a pair of the inner instance's first and last access
	if k.xFirst {
		fi, li = 0, 1
	}
	n := len(gr.pairs)
	var c *patCand
	for _, in := range u.insts {
		a1, a2 := &ix.acc[in[i]], &ix.acc[in[j]]
		lo := sortSearch(n, func(m int) bool { return !ix.hb(&ix.acc[gr.pairs[m][fi]], a1) })
		hi := sortSearch(n, func(m int) bool { return ix.hb(a2, &ix.acc[gr.pairs[m][li]]) })
		if lo >= hi {
			continue
		}
		gapStates := ix.gapStates(a1.g, a1, a2)
		m0 := lo + sortSearch(hi-lo, func(m int) bool { return ix.acc[gr.pairs[lo+m][fi]].ev > a1.ev })
		found := 0
		nearest(lo, hi, m0, func(m int) bool {
			bf, bl := &ix.acc[gr.pairs[m][fi]], &ix.acc[gr.pairs[m][li]]
			if !ix.compatibleAny(gapStates, bf.hist) || !ix.compatibleAny(gapStates, bl.hist) {
				return false
			}
			if c == nil {
				s.key = s.key[:0]
				s.key = append(s.key, 'a')
				for _, x := range []struct {
					site  trace.SiteID
					write bool
				}{{u.sites[i], u.writes[i]}, {ix.t.Events[bf.ev].Site, bf.write}, {ix.t.Events[bl.ev].Site, bl.write}, {u.sites[j], u.writes[j]}} {
					s.key = binary.AppendUvarint(s.key, uint64(x.site))
					s.key = append(s.key, opLetter(x.write)[0])
				}
				pat := opLetter(u.writes[i]) + "u(x)-" + opLetter(bf.write) + "u'(" + xy(k.xFirst) + ")-" +
					opLetter(bl.write) + "u'(" + xy(!k.xFirst) + ")-" + opLetter(u.writes[j]) + "u(y)"
				c = s.get(s.key, func() Finding {
					return Finding{Kind: KindAtomicSet, Level: LevelPredicted, Pattern: pat}
				})
			}
			c.offer([]uint32{a1.ev, bf.ev, bl.ev, a2.ev})
			found++
			return found == 2
		})
		if found > 0 {
			c.f.Count++
		}
	}
}

func xy(isX bool) string {
	if isX {
		return "x"
	}
	return "y"
}
