package predict

import (
	"encoding/binary"
	"slices"

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

// innerKey describes two accesses of one region instance, on x and on y,
// as the inside of a nested pattern.
type innerKey struct {
	g      uint32
	x, y   uint32
	sx, sy trace.SiteID
	wx, wy bool
	xFirst bool
}

// innerGroup is the instances with the same innerKey, in program order,
// each as its access on x and its access on y.
type innerGroup struct {
	key   innerKey
	pairs []innerPair
	num   int32 // its number among the groups innerGroups made
	// locked says that some pair holds a lock at one of its accesses;
	// when none does, every pair can coexist with any frame.
	locked bool
}

// innerPair is one instance of an innerGroup, its access on x and its
// access on y, as what the sweeps compare: the epoch, event and lock state
// of the instance's first access, and the clock, event and lock state of
// its last, so that a sweep reads one array. Groups are many and mostly
// small, so one array rather than one per field also saves allocations.
type innerPair struct {
	firstEp, firstEv, lastEv uint32
	lastClock                clockRef
	firstHist, lastHist      HistoryID
}

// clockOf returns snapshot s's tree, so that a sweep reads a component
// without going through the snapshot's number (clk).
func (ix *patIndex) clockOf(s uint32) clockRef { return ix.snaps[s] }

// clkAt returns component gi of the snapshot r (clk).
func (ix *patIndex) clkAt(r clockRef, gi uint32) uint32 { return ix.clocks.get(r, gi) }

// add appends the pair of accesses bx, by, on x and y, to the group.
func (gr *innerGroup) add(ix *patIndex, bx, by *patAccess) {
	f, l := bx, by
	if !gr.key.xFirst {
		f, l = l, f
	}
	gr.pairs = append(gr.pairs, innerPair{
		firstEp: f.ep, firstEv: f.ev, lastClock: ix.clockOf(l.snap), lastEv: l.ev,
		firstHist: f.hist, lastHist: l.hist,
	})
	if f.hist != 0 || l.hist != 0 {
		gr.locked = true
	}
}

// unitInstances returns the region instances that access at least two
// variables and at most maxASVAccesses times, each as its accesses, in
// program order per goroutine; with unit set, the units of unitOf
// instead of the instances.
func (ix *patIndex) unitInstances(unit bool) [][]uint32 {
	count := make([]int32, ix.numInst+1)
	var order []uint32
	of := func(in uint32) uint32 {
		if unit && in != 0 {
			return ix.unitOf[in]
		}
		return in
	}
	for ai := range ix.acc {
		in := of(ix.acc[ai].inst)
		if in == 0 {
			continue
		}
		if count[in] == 0 {
			order = append(order, in)
		}
		if count[in] <= maxASVAccesses {
			count[in]++
		}
	}
	// Keep the instances of 2 to maxASVAccesses accesses (a count past
	// maxASVAccesses marks a larger one) and lay them out in one array.
	slot := make([]int32, ix.numInst+1)
	total := int32(0)
	var kept []uint32
	for _, in := range order {
		if c := count[in]; c >= 2 && c <= maxASVAccesses {
			slot[in] = total
			total += c
			kept = append(kept, in)
		} else {
			slot[in] = -1
		}
	}
	flat := make([]uint32, total)
	// slot[in] moves to the end of in's list as it is filled.
	for ai := range ix.acc {
		in := of(ix.acc[ai].inst)
		if in == 0 || slot[in] < 0 {
			continue
		}
		flat[slot[in]] = uint32(ai)
		slot[in]++
	}
	list := func(in uint32) []uint32 { return flat[slot[in]-count[in] : slot[in]] }
	// The lists on more than one variable, counted first so that out is
	// made once.
	twoVars := func(l []uint32) bool {
		for _, ai := range l[1:] {
			if ix.acc[ai].v != ix.acc[l[0]].v {
				return true
			}
		}
		return false
	}
	n := 0
	for _, in := range kept {
		if twoVars(list(in)) {
			n++
		}
	}
	out := make([][]uint32, 0, n)
	for _, in := range kept {
		if l := list(in); twoVars(l) {
			out = append(out, l)
		}
	}
	return out
}

// innerGroups indexes every pair of accesses to two variables of the unit
// instances, by (x, y), for the outer accesses to look up. The groups of
// one (x, y) have their headers in one array and their pairs in another,
// in the order the groups were made: every frame on (x, y) reads them in
// that order, and laid out in one block they are read from memory in
// sequence rather than from allocations all over the heap, which was most
// of the matching's time on long traces. A first pass finds each pair's
// group and counts the groups' pairs, a second fills the arrays, so that
// no group's array grows by append or is copied.
//
// Pairs on a variable only one goroutine accesses are left out: no frame
// of another goroutine is on it. With live not nil, only the pairs on
// variables (x, y) on which live holds frames of another goroutine than
// the pair's are indexed: no frame that can match is on the others. On a
// trace of many variables that is most pairs, each on variables that
// only its own region instance touches together.
func (ix *patIndex) innerGroups(units [][]uint32, live *pairOwners) map[[2]uint32][]*innerGroup {
	byKey := newGroupMap(ix)
	// The groups' keys as made, their pair counts, and per pair in the
	// order of the passes its group's number; per (x, y), the numbers of
	// its groups.
	var made []innerKey
	var count []int32
	var gid []int32
	byXY := make(map[[2]uint32][]int32)
	eachPair := func(visit func(bx, by *patAccess, xFirst bool)) {
		for _, l := range units {
			for p := range l {
				for q := p + 1; q < len(l); q++ {
					if ix.acc[l[p]].v == ix.acc[l[q]].v {
						continue
					}
					for _, o := range [2][2]uint32{{l[p], l[q]}, {l[q], l[p]}} {
						bx, by := &ix.acc[o[0]], &ix.acc[o[1]]
						if ix.owned != nil && (ix.owned[bx.v] || ix.owned[by.v]) || live != nil && !live.otherThan(bx.v, by.v, bx.g) {
							continue
						}
						visit(bx, by, o[0] == l[p])
					}
				}
			}
		}
	}
	eachPair(func(bx, by *patAccess, xFirst bool) {
		num := byKey.get(bx, by, xFirst)
		if num < 0 {
			k := innerKey{
				g: bx.g, x: bx.v, y: by.v,
				sx: ix.site(bx), sy: ix.site(by),
				wx: bx.write, wy: by.write, xFirst: xFirst,
			}
			num = int32(len(made))
			byKey.put(bx, by, xFirst, num)
			made = append(made, k)
			count = append(count, 0)
			byXY[[2]uint32{k.x, k.y}] = append(byXY[[2]uint32{k.x, k.y}], num)
		}
		count[num]++
		gid = append(gid, num)
	})
	// Lay out each (x, y)'s groups, headers and pairs, in one block.
	total := 0
	for _, c := range count {
		total += int(c)
	}
	pairs := make([]innerPair, total)
	hdrs := make([]innerGroup, len(made))
	placed := make([]*innerGroup, len(made))
	out := make(map[[2]uint32][]*innerGroup, len(byXY))
	off, h := 0, 0
	for xy, nums := range byXY {
		l := make([]*innerGroup, len(nums))
		for i, num := range nums {
			c := int(count[num])
			hdrs[h] = innerGroup{key: made[num], pairs: pairs[off : off : off+c], num: num}
			placed[num] = &hdrs[h]
			l[i] = &hdrs[h]
			off += c
			h++
		}
		out[xy] = l
	}
	k := 0
	eachPair(func(bx, by *patAccess, _ bool) {
		placed[gid[k]].add(ix, bx, by)
		k++
	})
	return out
}

// groupMap finds the inner or outer group of two accesses of one region
// instance. A group is determined by the accesses' keys (goroutine, site,
// operation), their variables and their order, which usually pack into
// one integer, so that the lookup, done for every pair of accesses of
// every instance, hashes 8 bytes rather than a struct.
//
// It maps a group to its number among the groups made, not to the group:
// the groups' headers are laid out once counted, and a header made for
// each group while the map was built held 64 bytes per group until then
// (millions of groups on a trace of many variables).
type groupMap struct {
	packed bool
	small  map[uint64]int32
	large  map[pairGroupKey]int32
	// cache answers for small before the map: consecutive instances of a
	// region mostly fall in the groups their predecessors did.
	cache []groupCacheEntry
}

// groupCacheBits sizes groupMap's direct-mapped table: 8192 entries,
// 128 KB.
const groupCacheBits = 13

// groupCacheEntry is one entry of groupMap's direct-mapped table: 1 +
// the group's number, 0 in an empty one.
type groupCacheEntry struct {
	key uint64
	num int32
}

func (m *groupMap) slot(k uint64) *groupCacheEntry {
	return &m.cache[(k*0x9E3779B97F4A7C15)>>(64-groupCacheBits)]
}

// pairGroupKey is a groupMap key that does not pack.
type pairGroupKey struct {
	kx, ky, x, y uint32
	xFirst       bool
}

// Packing limits: 10 bits per access key, 21 per variable.
const (
	packKeyBits = 10
	packVarBits = 21
)

func newGroupMap(ix *patIndex) *groupMap {
	m := &groupMap{packed: len(ix.keys) <= 1<<packKeyBits && len(ix.vars) <= 1<<packVarBits}
	if m.packed {
		m.small = make(map[uint64]int32)
		m.cache = make([]groupCacheEntry, 1<<groupCacheBits)
	} else {
		m.large = make(map[pairGroupKey]int32)
	}
	return m
}

func packGroup(bx, by *patAccess, xFirst bool) uint64 {
	k := uint64(bx.key) | uint64(by.key)<<packKeyBits | uint64(bx.v)<<(2*packKeyBits) | uint64(by.v)<<(2*packKeyBits+packVarBits)
	if xFirst {
		k |= 1 << 63
	}
	return k
}

// get returns the number of the group of bx and by, or -1 if it has
// none yet.
func (m *groupMap) get(bx, by *patAccess, xFirst bool) int32 {
	if m.packed {
		k := packGroup(bx, by, xFirst)
		e := m.slot(k)
		if e.num != 0 && e.key == k {
			return e.num - 1
		}
		num := m.small[k]
		if num != 0 {
			*e = groupCacheEntry{k, num}
		}
		return num - 1
	}
	return m.large[pairGroupKey{bx.key, by.key, bx.v, by.v, xFirst}] - 1
}

// put gives the group of bx and by the number num.
func (m *groupMap) put(bx, by *patAccess, xFirst bool, num int32) {
	if m.packed {
		k := packGroup(bx, by, xFirst)
		m.small[k] = num + 1
		*m.slot(k) = groupCacheEntry{k, num + 1}
		return
	}
	m.large[pairGroupKey{bx.key, by.key, bx.v, by.v, xFirst}] = num + 1
}

// frameGroup is the frames of nested patterns with the same key, in
// program order. A frame is two accesses of one region instance, a1 on x
// and a2 on y, with no access of the instance to x or y between them
// (tight, so that each violation is reported once, by the accesses that
// frame the interleaved ones); its key is their goroutine, variables,
// sites and operations, as an innerKey with xFirst set.
type frameGroup struct {
	key    innerKey
	num    int32 // its number among the groups made
	frames []asvFrame
}

// asvFrame is one frame a1..a2 of a frameGroup, with what the matching
// reads of it, so that a sweep reads one array rather than two accesses
// of the index per frame (a cache miss each on a long trace).
type asvFrame struct {
	ev1, ev2 uint32   // the events of a1 and a2
	clock1   clockRef // a1's clock snapshot
	ep2      uint32   // a2's epoch
	// The gap: the lock states the goroutine passes through from a1 to
	// a2, glog[g][st1 : st2+1] (patIndex.gapStates).
	st1, st2 uint32
	// zero says that some state of the gap holds no lock: every lock
	// state can coexist with it (compat), so every inner pair is
	// compatible with the frame.
	zero bool
}

// outerGroups indexes the tight pairs of the unit instances by their key,
// each group's frames in program order. A first pass finds each frame's
// group and counts the groups' frames, a second lays them out in one
// array, group after group, in the order the groups were made.
//
// A frame whose goroutine holds a guard of x or y throughout (guards.go)
// has no inner pair to match and is left out; its group is numbered all
// the same, so that the groups keep their numbers, but only the groups
// with frames are returned, each with its number; groups is how many
// were numbered. live, if not nil, gets the variables (x, y) of the
// frames kept, with their goroutines.
func (ix *patIndex) outerGroups(units [][]uint32, live *pairOwners) (out []frameGroup, groups int32) {
	byKey := newGroupMap(ix)
	// The groups' keys and frame counts, and per frame its group's
	// number (the map's groups carry only that number).
	var keys []innerKey
	var count []int32
	var gid []int32
	eachFrame := func(visit func(a1, a2 *patAccess, dead bool)) {
		for _, l := range units {
			for i := range l {
				for j := i + 1; j < len(l); j++ {
					a1, a2 := &ix.acc[l[i]], &ix.acc[l[j]]
					x, y := a1.v, a2.v
					if x == y {
						continue
					}
					tight := true
					for k := i + 1; k < j; k++ {
						if v := ix.acc[l[k]].v; v == x || v == y {
							tight = false
							break
						}
					}
					if tight {
						visit(a1, a2, ix.gapHolds(a1.g, a1.st, a2.st, x, y))
					}
				}
			}
		}
	}
	eachFrame(func(a1, a2 *patAccess, dead bool) {
		// The keys of a1 and a2 determine the group's goroutine, sites
		// and operations.
		num := byKey.get(a1, a2, true)
		if num < 0 {
			num = int32(len(keys))
			byKey.put(a1, a2, true, num)
			keys = append(keys, innerKey{g: a1.g, x: a1.v, y: a2.v, sx: ix.site(a1), sy: ix.site(a2),
				wx: a1.write, wy: a2.write, xFirst: true})
			count = append(count, 0)
		}
		if dead {
			return
		}
		if live != nil {
			live.add(a1.v, a2.v, a1.g)
		}
		count[num]++
		gid = append(gid, num)
	})
	// Only the groups with frames are laid out, each with its number: a
	// group whose frames were all left out matches nothing, and on a run
	// of correctly locked code that is nearly every group.
	kept := 0
	for _, c := range count {
		if c > 0 {
			kept++
		}
	}
	out = make([]frameGroup, 0, kept)
	frames := make([]asvFrame, len(gid))
	off := 0
	for i, c := range count {
		if c == 0 {
			continue
		}
		out = append(out, frameGroup{key: keys[i], num: int32(i), frames: frames[off : off : off+int(c)]})
		off += int(c)
		count[i] = int32(len(out) - 1) // now its place in out
	}
	k := 0
	eachFrame(func(a1, a2 *patAccess, dead bool) {
		if dead {
			return
		}
		og := &out[count[gid[k]]]
		k++
		fr := asvFrame{ev1: a1.ev, ev2: a2.ev, clock1: ix.clockOf(a1.snap), ep2: a2.ep, st1: a1.st, st2: a2.st}
		for _, h := range ix.gapStates(a1.g, a1, a2) {
			if h == 0 {
				fr.zero = true
				break
			}
		}
		og.frames = append(og.frames, fr)
	})
	return out, int32(len(keys))
}

// asvIndex is the atomic-set search's view of the trace: the frames and
// inner pairs of the unit instances, grouped.
type asvIndex struct {
	// outer is the frame groups with frames, in the order the groups
	// were made; groups is the number of groups made, with those left
	// out.
	outer  []frameGroup
	groups int32
	// byClass lists, per (x, y), the inner groups a frame of each class
	// (frameClass) can be matched with, in the order of inner, so that
	// atomicSetOuter reads only those, from one array.
	byClass map[[2]uint32]*[4][]innerRef
}

// innerRef is an inner group with its goroutine, for atomicSetOuter to
// skip the groups of the frame's goroutine without following the pointer.
type innerRef struct {
	g  uint32
	gr *innerGroup
}

// frameClass numbers the four combinations of a frame's operations.
func frameClass(w1, w2 bool) int {
	c := 0
	if w1 {
		c |= 1
	}
	if w2 {
		c |= 2
	}
	return c
}

func (ix *patIndex) asvIndex() *asvIndex {
	units := ix.unitInstances(false)
	// The goroutine that interferes need not mean its two accesses as
	// one step: its unit may be a proposal around several regions.
	interferers := units
	if ix.unitOf != nil {
		interferers = ix.unitInstances(true)
	}
	if len(units) == 0 || len(interferers) == 0 {
		return &asvIndex{}
	}
	a := &asvIndex{}
	var inner map[[2]uint32][]*innerGroup
	if ix.anyGuard {
		// Guards leave frames out (outerGroups): the inner pairs are
		// indexed only on the variables of the frames left, which on
		// a run of correctly locked code is none of them.
		live := newPairOwners(len(ix.vars))
		a.outer, a.groups = ix.outerGroups(units, live)
		inner = ix.innerGroups(interferers, live)
	} else {
		// The frames are grouped on another goroutine while this one
		// groups the inner pairs: the search's workers wait for both.
		outerDone := make(chan struct{})
		go func() {
			defer close(outerDone)
			a.outer, a.groups = ix.outerGroups(units, nil)
		}()
		defer func() { <-outerDone }()
		inner = ix.innerGroups(interferers, nil)
	}
	a.byClass = make(map[[2]uint32]*[4][]innerRef, len(inner))
	for xy, l := range inner {
		var cl [4][]innerRef
		for c := range cl {
			w1, w2 := c&1 != 0, c&2 != 0
			for _, gr := range l {
				// A conflict on each variable: the frame's access or the
				// inner one writes.
				if (w1 || gr.key.wx) && (gr.key.wy || w2) {
					cl[c] = append(cl[c], innerRef{gr.key.g, gr})
				}
			}
		}
		a.byClass[xy] = &cl
	}
	return a
}

// atomicSetOuter finds the nested atomic-set violations framed by one
// group of frames: it matches them against the inner groups on the same
// two variables. patSearch.run calls it for every frame group.
func (s *patSearch) atomicSetOuter(a *asvIndex, og *frameGroup) {
	ok := &og.key
	cl := a.byClass[[2]uint32{ok.x, ok.y}]
	if cl == nil {
		return
	}
	// The frame whose a1 comes first and the one whose a2 comes last:
	// one goroutine's events are in program order in the trace, so their
	// clocks bound every frame's.
	if len(og.frames) == 0 {
		return
	}
	first, last := &og.frames[0], &og.frames[0]
	for i := range og.frames {
		fr := &og.frames[i]
		if fr.ev1 < first.ev1 {
			first = fr
		}
		if fr.ev2 > last.ev2 {
			last = fr
		}
	}
	ix := s.ix
	for _, r := range cl[frameClass(ok.wx, ok.wy)] {
		if r.g == ok.g {
			continue
		}
		if ps := r.gr.pairs; len(ps) == 0 ||
			ps[len(ps)-1].firstEp <= ix.clkAt(first.clock1, r.gr.key.g) ||
			last.ep2 <= ix.clkAt(ps[0].lastClock, ok.g) {
			// Every pair's first access happens before every frame's
			// a1, or every frame's a2 before every pair's last access
			// (goroutines that do not overlap): the bounds of
			// atomicSetMatch would leave nothing.
			continue
		}
		s.atomicSetMatch(og, r.gr)
	}
}

// atomicSetMatch matches the frames of og against the inner pairs of gr.
// For a frame, the inner pairs whose first access need not precede a1
// form a suffix (by program order) and those whose last access need not
// follow a2 a prefix; the bounds move forward with the frames, and
// galloping from the previous ones finds them.
func (s *patSearch) atomicSetMatch(og *frameGroup, gr *innerGroup) {
	ix := s.ix
	k := &gr.key
	g2 := og.key.g // the goroutine of the frames
	n := len(gr.pairs)
	var c *patCand
	lo, hi := 0, 0
	var prev1, prev2 uint32
	for i := range og.frames {
		fr := &og.frames[i]
		if c != nil && c.f.Count >= maxInstances && len(c.reps) == maxReps {
			return
		}
		// The bounds move forward with a1 and a2; frames of one instance
		// can step back, and then the search starts over.
		if fr.ev1 < prev1 {
			lo = 0
		}
		if fr.ev2 < prev2 || hi < lo {
			hi = lo
		}
		prev1, prev2 = fr.ev1, fr.ev2
		// The bounds mostly stay where they were: the first test of each
		// is made here, and gallop, which calls a function per test, only
		// runs when a bound moves (it gives the same bound from the next
		// index, the test being false at this one).
		c1 := ix.clkAt(fr.clock1, k.g)
		if lo < n && gr.pairs[lo].firstEp <= c1 {
			lo = gallop(lo+1, n, func(m int) bool { return gr.pairs[m].firstEp > c1 })
		}
		hi = max(hi, lo)
		if hi < n && fr.ep2 > ix.clkAt(gr.pairs[hi].lastClock, g2) {
			hi = gallop(hi+1, n, func(m int) bool { return fr.ep2 <= ix.clkAt(gr.pairs[m].lastClock, g2) })
		}
		if lo >= hi {
			continue
		}
		// Every instance of this frame spans at least a1 to a2: when the
		// candidate's representatives are all closer, none of them can
		// become one (offer refuses it), and the frame only needs to know
		// whether one instance exists to be counted.
		want := 2
		if c != nil && !c.mayOffer(uint64(fr.ev2-fr.ev1)) {
			want = 1
			// When a state of the gap holds no lock, or the inner pairs
			// hold none, every pair is compatible with the frame, so the
			// first pair tried is one.
			if !gr.locked || fr.zero {
				c.f.Count++
				continue
			}
		}
		if !fr.zero {
			s.setGap(g2, fr.st1, fr.st2)
		}
		m0 := lo + sortSearch(hi-lo, func(m int) bool { return gr.pairs[lo+m].firstEv > fr.ev1 })
		// The pairs are tried from m0 outwards, as nearest does, inline.
		// Once one is compatible the frame counts, and the search goes on
		// only while a pair left to try could still become a
		// representative: an instance spans at least from the earlier of
		// a1 and the pair's first access to the later of a2 and its
		// first access, a bound that grows outwards on both sides, so
		// when it reaches the candidate's farthest representative every
		// pair left would be refused by offer.
		found := 0
		l, r := m0-1, m0
		for t := 0; t < maxNearest && (l >= lo || r < hi); t++ {
			if found > 0 && want == 2 && !c.mayOffer(uint64(s.asvBound(gr, fr.ev1, fr.ev2, l, r, lo, hi))) {
				break
			}
			m := r
			if l >= lo && (r >= hi || t%2 == 0) {
				m = l
				l--
			} else {
				r++
			}
			p := &gr.pairs[m]
			if !fr.zero && (!s.compatGap(p.firstHist) || !s.compatGap(p.lastHist)) {
				continue
			}
			if c == nil {
				c = s.atomicSetCand(&og.key, k)
				if !c.mayOffer(uint64(fr.ev2 - fr.ev1)) {
					want = 1
				}
			}
			if want == 2 {
				rep := [4]uint32{fr.ev1, p.firstEv, p.lastEv, fr.ev2}
				c.offer(rep[:])
			}
			found++
			if found == want {
				break
			}
		}
		if found > 0 {
			c.f.Count++
		}
	}
}

// asvBound returns a lower bound on the span of the instances that frame
// a1..a2 (events e1 < e2) makes with the pairs of gr left to try, those at
// l and below and at r and above within [lo, hi): pairs[m0:] start after
// e1 and pairs[:m0] at or before it, their first events in program order.
func (s *patSearch) asvBound(gr *innerGroup, e1, e2 uint32, l, r, lo, hi int) uint32 {
	b := ^uint32(0)
	if l >= lo {
		b = e2 - gr.pairs[l].firstEv
	}
	if r < hi {
		b = min(b, max(e2, gr.pairs[r].firstEv)-e1)
	}
	return b
}

// atomicSetCand returns the candidate of frames og interleaved by the
// inner pairs of gr. The sites and operations of both come from the groups'
// keys.
func (s *patSearch) atomicSetCand(ok, k *innerKey) *patCand {
	// The inner instance's first access is its access to x when xFirst.
	fs, fw, ls, lw := k.sx, k.wx, k.sy, k.wy
	if !k.xFirst {
		fs, fw, ls, lw = ls, lw, fs, fw
	}
	// Many pairs of groups share a site combination: a map keyed by the
	// four sites and operations finds its candidate without building the
	// string key.
	// A direct-mapped table answers before the map: the search asks
	// once per pair of groups, millions of times on a long trace, about
	// few combinations.
	ak := asvCandKey{ok.sx, fs, ls, ok.sy, ok.wx, fw, lw, ok.wy}
	h := (uint64(ak.s1)<<32 | uint64(ak.s4)) * 0x9E3779B97F4A7C15
	h ^= (uint64(ak.s2)<<32 | uint64(ak.s3)) * 0xC2B2AE3D27D4EB4F
	if ak.w1 {
		h ^= 1 << 60
	}
	if ak.w2 {
		h ^= 1 << 61
	}
	if ak.w3 {
		h ^= 1 << 62
	}
	if ak.w4 {
		h ^= 1 << 63
	}
	e := &s.asvFast[(h*0x9E3779B97F4A7C15)>>(64-asvFastBits)]
	if e.c != nil && e.k == ak {
		return e.c
	}
	c := s.asvCands[ak]
	if c == nil {
		c = s.atomicSetCandSlow(ok, k, fs, fw, ls, lw)
		if s.asvCands == nil {
			s.asvCands = make(map[asvCandKey]*patCand)
		}
		s.asvCands[ak] = c
	}
	*e = asvFastEntry{ak, c}
	return c
}

// asvFastBits sizes atomicSetCand's direct-mapped table: 256 entries.
const asvFastBits = 8

// asvFastEntry is one entry of that table; c is nil in an empty one.
type asvFastEntry struct {
	k asvCandKey
	c *patCand
}

// asvCandKey is the site combination of an atomic-set candidate: the
// frame's first access, the inner instance's two, the frame's last.
type asvCandKey struct {
	s1, s2, s3, s4 trace.SiteID
	w1, w2, w3, w4 bool
}

func (s *patSearch) atomicSetCandSlow(ok, k *innerKey, fs trace.SiteID, fw bool, ls trace.SiteID, lw bool) *patCand {
	s.key = append(s.key[:0], 'a')
	for _, x := range [4]struct {
		site  trace.SiteID
		write bool
	}{{ok.sx, ok.wx}, {fs, fw}, {ls, lw}, {ok.sy, ok.wy}} {
		s.key = binary.AppendUvarint(s.key, uint64(x.site))
		s.key = append(s.key, opLetter(x.write)[0])
	}
	return s.get(s.key, func() Finding {
		pat := opLetter(ok.wx) + "u(x)-" + opLetter(fw) + "u'(" + xy(k.xFirst) + ")-" +
			opLetter(lw) + "u'(" + xy(!k.xFirst) + ")-" + opLetter(ok.wy) + "u(y)"
		return Finding{Kind: KindAtomicSet, Level: LevelPredicted, Pattern: pat}
	})
}

// setGap makes the gap of goroutine g from its lock state st1 to st2
// (glog[g][st1 : st2+1]) the lock states compatGap checks against.
// Consecutive frames of a group usually pass through the same lock
// states, so the answers compatGap remembers are kept while the states
// stay the same.
func (s *patSearch) setGap(g, st1, st2 uint32) {
	if s.gapGen != 0 && g == s.gapG && st1 == s.gapSt1 && st2 == s.gapSt2 {
		return
	}
	s.gapG, s.gapSt1, s.gapSt2 = g, st1, st2
	gap := s.ix.glog[g][st1 : st2+1]
	if s.gapGen != 0 && slices.Equal(gap, s.gap) {
		return
	}
	s.gap = append(s.gap[:0], gap...)
	// A new generation forgets every answer at once.
	s.gapGen++
	if s.gapGen == 0 {
		clear(s.gapMemo[:])
		s.gapGen = 1
	}
}

// gapMemoSize is the number of answers compatGap remembers per gap, in a
// direct-mapped table indexed by the lock state's low bits: a gap is
// matched against few distinct inner states.
const gapMemoSize = 64

// compatGap reports whether lock state h can coexist with some state of
// the gap set by setGap (compatibleAny, remembered).
func (s *patSearch) compatGap(h HistoryID) bool {
	if h == 0 {
		return true // compat's answer for every state
	}
	m := &s.gapMemo[uint32(h)%gapMemoSize]
	if m.gen == s.gapGen && m.h == h {
		return m.ok
	}
	ok := s.compatibleAny(s.gap, h)
	*m = gapAnswer{h: h, gen: s.gapGen, ok: ok}
	return ok
}

// gapAnswer is one answer compatGap remembers, valid in generation gen of
// the gap.
type gapAnswer struct {
	h   HistoryID
	gen uint32
	ok  bool
}

func xy(isX bool) string {
	if isX {
		return "x"
	}
	return "y"
}
