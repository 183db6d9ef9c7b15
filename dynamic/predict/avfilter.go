package predict

import "github.com/avcheck/avcheck/dynamic/trace"

// This file is AVFilter (Zeng, Sun, Liu and He,
// shared/seeds/000_5650ed431402be49.txt): a linear post-prediction check
// that drops a predicted triplet when moving its interleaved access breaks
// a read-after-write relation of the recorded trace that the goroutines'
// control flow may depend on (section 3.3, Lemmas 1 and 2, Algorithm 1).
//
// Algorithm 1 names the triplet a_i^1, a_j^2, a_k^1: a_i and a_k are the
// accesses of thread 1's region (e1 and e2 here), a_j is thread 2's
// interleaved access (f). Read-after-write relations are taken from trace
// order (the last write to the variable before a read is the write it
// read), and branches from Event.Branches (the paper's br).
//
// Two readings of the paper are made explicit here:
//
//   - br of an event counts the branches taken since its goroutine's
//     previous event, so "a branch between r and a_k" is a positive br on
//     an event of thread 1 in (r, a_k], a_k included: the branches that
//     decide whether a_k runs are counted by a_k itself.
//   - Lines 20-24 drop the triplet when a read of thread 1 in (a_j, a_i]
//     read from thread 2's a_j or later. For r = a_i itself this would
//     drop Table 1's last two scenarios (W2 R1 R1 and W2 R1 W1), which the
//     paper says AVFilter keeps; Fig. 6, the example of Lemma 2 case 1, is
//     one where the changed value of a_i decides a branch before a_k. So
//     for r = a_i the check also needs a branch of thread 1 in (a_i, a_k],
//     as case 2 of Lemma 2 does.

// avIndex finds the writes of a variable, and of a variable by one
// goroutine, in trace order, so that Algorithm 1's "the last write before
// r" and "the first write of thread 2 after r" are binary searches rather
// than scans. The lists are drawn from the pattern search's index, for the
// variables AVFilter asks about only.
type avIndex struct {
	t        *trace.Trace
	ix       *patIndex
	writes   map[trace.ObjID][]uint32
	writesBy map[avKey][]uint32
}

type avKey struct {
	obj trace.ObjID
	g   trace.GoID
}

func newAVIndex(t *trace.Trace, ix *patIndex) *avIndex {
	return &avIndex{t: t, ix: ix, writes: make(map[trace.ObjID][]uint32), writesBy: make(map[avKey][]uint32)}
}

// writesOf returns the event indices of the writes of obj, or with byG
// only those of goroutine g, in trace order.
func (av *avIndex) writesOf(obj trace.ObjID, g trace.GoID, byG bool) []uint32 {
	if !byG {
		if l, ok := av.writes[obj]; ok {
			return l
		}
	} else if l, ok := av.writesBy[avKey{obj, g}]; ok {
		return l
	}
	var l []uint32
	if v, ok := av.ix.varOf[obj]; ok {
		for _, ai := range av.ix.byVar[v] {
			a := &av.ix.acc[ai]
			if a.write && (!byG || av.t.Events[a.ev].G == g) {
				l = append(l, a.ev)
			}
		}
	}
	if !byG {
		av.writes[obj] = l
	} else {
		av.writesBy[avKey{obj, g}] = l
	}
	return l
}

// before returns the last element of l below i, or -1.
func before(l []uint32, i uint32) int64 {
	k := sortSearch(len(l), func(k int) bool { return l[k] >= i })
	if k == 0 {
		return -1
	}
	return int64(l[k-1])
}

// after returns the first element of l above i, or -1.
func after(l []uint32, i uint32) int64 {
	k := sortSearch(len(l), func(k int) bool { return l[k] > i })
	if k == len(l) {
		return -1
	}
	return int64(l[k])
}

// dropAny runs Algorithm 1 on a triplet (first, interleaved, last), or
// on an atomic-set instance (first, interleaved, interleaved, last) as
// the two triplets of its region's first and last access with each
// interleaved access: the instance moves both into the region, so what
// moving either breaks, it breaks (a region whose first read of x read
// the other goroutine's write of x, and which branches on it before its
// read of y, would read another x, and may not read y at all).
func (av *avIndex) dropAny(r []uint32) string {
	last := r[len(r)-1]
	for _, f := range r[1 : len(r)-1] {
		if why := av.drop(r[0], f, last); why != "" {
			return why
		}
	}
	return ""
}

// drop runs Algorithm 1 on the triplet (e1, f, e2), given as indices into
// the trace's events, and returns the reason to drop it, or "" to keep it.
func (av *avIndex) drop(ai, aj, ak uint32) string {
	ev := av.t.Events
	t1, t2 := ev[ai].G, ev[aj].G
	x := ev[aj].Obj
	isRead := func(i uint32) bool { return ev[i].Kind == trace.KindRead }
	lastWrite := func(obj trace.ObjID, i uint32) int64 { return before(av.writesOf(obj, 0, false), i) }
	// branchIn reports a branch of thread 1 in (r, ak].
	branchIn := func(r uint32) bool {
		for k := r + 1; k <= ak; k++ {
			if ev[k].G == t1 && ev[k].Branches > 0 {
				return true
			}
		}
		return false
	}
	if aj > ai {
		// Lines 2-17: a_j was recorded after a_i and is moved before a_k.
		prev := int64(-1) // thread 2's access of x before a_j
		for k := int64(aj) - 1; k > int64(ai); k-- {
			if ev[k].G == t2 && ev[k].Obj == x && ev[k].Kind.IsAccess() {
				prev = k
				break
			}
		}
		for r := ai + 1; r < aj; r++ {
			inFirst := int64(r) <= prev
			inSecond := r > ak
			if !(inFirst || inSecond) || !isRead(r) || ev[r].G != t2 {
				continue
			}
			w := lastWrite(ev[r].Obj, r)
			if w < 0 || ev[w].G != t1 {
				continue
			}
			if inFirst && w > int64(ai) {
				return "a read of the interleaving goroutine moved before the region would miss the region's write it read (AVFilter Lemma 1, case 2)"
			}
			if inSecond && w > int64(ak) {
				return "a read of the interleaving goroutine moved before the region's last access would miss the write it read (AVFilter Lemma 1, case 1)"
			}
		}
		for r := ai; r < ak && prev >= 0; r++ {
			if !isRead(r) || ev[r].G != t1 {
				continue
			}
			// The first write of thread 2 to r's variable after r.
			w := after(av.writesOf(ev[r].Obj, t2, true), r)
			if w >= 0 && w <= prev && branchIn(r) {
				return "a write of the interleaving goroutine moved before the region changes a value the region branches on (AVFilter Lemma 1, case 3)"
			}
		}
	}
	if aj < ai {
		// Lines 19-33: a_j was recorded before a_i and is moved after it.
		for r := aj + 1; r <= ai; r++ {
			if !isRead(r) || ev[r].G != t1 {
				continue
			}
			w := lastWrite(ev[r].Obj, r)
			if w >= int64(aj) && ev[w].G == t2 && (r != ai || branchIn(r)) {
				return "a read of the region moved before the interleaved write would miss the value it read (AVFilter Lemma 2, case 1)"
			}
		}
		next := int64(len(ev)) // thread 2's access of x after a_j
		for k := aj + 1; k < ak; k++ {
			if ev[k].G == t2 && ev[k].Obj == x && ev[k].Kind.IsAccess() {
				next = int64(k)
				break
			}
		}
		for r := ai + 1; r < ak; r++ {
			if !isRead(r) || ev[r].G != t1 {
				continue
			}
			// The last write of thread 2 to r's variable before r.
			w := before(av.writesOf(ev[r].Obj, t2, true), r)
			if w > next && branchIn(r) {
				return "a read of the region would miss a later write of the interleaving goroutine it branches on (AVFilter Lemma 2, case 2)"
			}
		}
	}
	return ""
}
