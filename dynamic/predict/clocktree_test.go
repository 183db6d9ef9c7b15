package predict

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// TestClockTreeGet checks every component of snapshots made one from
// another, as the indexer makes them (a goroutine's from its last, a new
// goroutine's from its parent's), against the flat clocks they stand for:
// clocks that grow, that change in a few components or in many, that
// shrink to zeros, and components past a clock's end.
func TestClockTreeGet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tr := newClockTree()
	type snap struct {
		ref clockRef
		vc  []uint32
	}
	var snaps []snap
	base := clockRef{}
	var vc []uint32
	for i := range 3000 {
		switch r := rng.IntN(10); {
		case r == 0 && len(snaps) > 0:
			// A new goroutine: from an earlier snapshot.
			s := snaps[rng.IntN(len(snaps))]
			base, vc = s.ref, append([]uint32(nil), s.vc...)
		case r == 1:
			vc = append(vc, make([]uint32, rng.IntN(300))...) // wider
		case r == 2:
			for k := range vc {
				vc[k] = rng.Uint32N(4) // many components change, some to 0
			}
		}
		if len(vc) == 0 {
			vc = append(vc, 1)
		}
		for range rng.IntN(3) + 1 {
			vc[rng.IntN(len(vc))] += uint32(i)
		}
		ref := tr.snapshot(base, vc)
		snaps = append(snaps, snap{ref, append([]uint32(nil), vc...)})
		base = ref
	}
	for i, s := range snaps {
		for gi := range uint32(len(s.vc)) + 2*clockFan {
			want := uint32(0)
			if int(gi) < len(s.vc) {
				want = s.vc[gi]
			}
			if got := tr.get(s.ref, gi); got != want {
				t.Fatalf("snapshot %d (%d components): component %d is %d, want %d", i, len(s.vc), gi, got, want)
			}
		}
	}
	if got := tr.get(clockRef{}, 0); got != 0 {
		t.Errorf("the zero clock's component 0 is %d", got)
	}
	// The nodes fill more than one chunk, and the first grew to its full
	// size on the way.
	if n := tr.nodeCount(); n <= 2*chunkNodes || len(tr.chunks) != (n+chunkNodes-1)/chunkNodes || cap(tr.chunks[0]) != chunkNodes<<clockBits {
		t.Errorf("%d nodes in %d chunks, the first of %d words: the test does not cross chunks as it should", n, len(tr.chunks), cap(tr.chunks[0]))
	}
}

// TestClockTreeShares checks that a snapshot costs memory in proportion
// to the components that changed since the snapshot it is made from, not
// to the clock's width: 4,096 goroutines that each learn of two others
// take a few nodes per snapshot, where flat copies took 4,096 words each.
func TestClockTreeShares(t *testing.T) {
	const width, snaps = 4096, 2000
	tr := newClockTree()
	vc := make([]uint32, width)
	for i := range vc {
		vc[i] = uint32(i + 1)
	}
	first := tr.snapshot(clockRef{}, vc)
	full := tr.nodeCount()
	base := first
	for i := range snaps {
		vc[(i*7)%width]++
		vc[(i*13+1)%width]++
		base = tr.snapshot(base, vc)
	}
	h := int(heightFor(width))
	perSnap := float64(tr.nodeCount()-full) / snaps
	if perSnap > float64(2*h) {
		t.Errorf("%.1f nodes per snapshot of 2 changed components, want at most %d (2 paths of height %d)", perSnap, 2*h, h)
	}
	if words := (tr.nodeCount() - full) * clockFan; words*10 > snaps*width {
		t.Errorf("%d words for %d snapshots of %d goroutines, want under a tenth of flat copies (%d)", words, snaps, width, snaps*width)
	}
}

// TestIndexSnapshotsShortLived checks the index's snapshots on a trace
// of short-lived goroutines (tracegen.Shape.Lifetime), whose clocks grow
// as wide as the goroutines so far, though each learns of one goroutine
// at a time: a few paths of nodes per snapshot (its own component, the
// one it learned, and one level more now and then), not a copy as wide
// as the goroutines (snapshots times goroutines over two words in all,
// about fifteen times as many here).
func TestIndexSnapshotsShortLived(t *testing.T) {
	tr := tracegen.ShapeTrace(tracegen.Shape{Seed: 1, Events: 30000, Goroutines: 8, Lifetime: 1})
	if err := trace.Validate(tr); err != nil {
		t.Fatal(err)
	}
	ix := buildIndex(tr)
	flat := len(ix.snaps) * len(ix.gids) / 2 // the clocks grow about evenly
	words := ix.clocks.nodeCount() * clockFan
	if len(ix.gids) < 1000 || flat < 100*len(ix.acc) {
		t.Fatalf("%d goroutines, %d snapshots, %d accesses: not the trace this test is about", len(ix.gids), len(ix.snaps), len(ix.acc))
	}
	h := int(heightFor(len(ix.gids)))
	if perSnap := float64(ix.clocks.nodeCount()) / float64(len(ix.snaps)); perSnap > float64(3*h) {
		t.Errorf("%.1f nodes per snapshot, want at most %d (3 paths of height %d)", perSnap, 3*h, h)
	}
	if words*5 > flat {
		t.Errorf("%d words of snapshot nodes for %d snapshots of %d goroutines, want under a fifth of flat copies (about %d)", words, len(ix.snaps), len(ix.gids), flat)
	}
}

// overlapping gives exactly the pairs of groups of which the first does
// not happen before the second's first access, as trying every pair
// does, on traces of short-lived goroutines (each variable's groups a
// chain, mostly) and of long-lived ones (all overlap); and on the chains
// it tests a few of the goroutines squared.
func TestOverlappingGroups(t *testing.T) {
	for _, sh := range []tracegen.Shape{
		{Seed: 1, Events: 20000, Goroutines: 8, Vars: 4, Locks: 4, Lifetime: 1},
		{Seed: 2, Events: 20000, Goroutines: 16, Vars: 8, Locks: 4, Lifetime: 2, Interleaved: true, Unlocked: 0.2, Violations: true},
		{Seed: 3, Events: 20000, Goroutines: 4, Vars: 4, Locks: 2, Lifetime: 3, Violations: true},
		{Seed: 4, Events: 20000, Goroutines: 64, Vars: 4, Locks: 4, Interleaved: true},
	} {
		tr := tracegen.ShapeTrace(sh)
		if err := trace.Validate(tr); err != nil {
			t.Fatal(err)
		}
		ix := buildIndex(tr)
		s := &patSearch{ix: ix}
		swept, tested, all, tripled := 0, 0, 0, 0
		groupTests, slotTests, slotAll, gaveUp := 0, 0, 0, 0
		for v := range ix.byVar {
			groups := s.groupVar(ix.byVar[v])
			if len(groups) < 2 {
				continue
			}
			n0 := s.ovl.tests
			pairs, ok := s.overlapping(groups)
			groupTests += s.ovl.tests - n0
			if !ok {
				// Past its budget, where most pairs overlap (long-lived
				// goroutines), the sweep gives up; the findings below
				// are then those of trying every pair, by both ways.
				if sh.Lifetime > 0 {
					t.Fatalf("%+v: variable %d: overlapping gave up", sh, v)
				}
				gaveUp++
				continue
			}
			var want []uint64
			for i := range groups {
				for j := i + 1; j < len(groups); j++ {
					gi, gj := &groups[i], &groups[j]
					if gi.key.g != gj.key.g && (gi.key.write || gj.key.write) && gi.ep[len(gi.ep)-1] > ix.clk(gj.snap[0], gi.key.g) {
						want = append(want, uint64(i)<<32|uint64(j))
					}
				}
			}
			if !slices.Equal(pairs, want) {
				t.Fatalf("%+v: variable %d (%d groups): %d pairs, want %d", sh, v, len(groups), len(pairs), len(want))
			}
			// The pairs of slot groups and groups of f accesses that
			// tripletPairs does not dismiss at once.
			slots := s.slots(ix.byVar[v])
			n0 = s.ovl.tests
			tpairs, ok := s.slotPairs(groups, slots)
			slotTests += s.ovl.tests - n0
			slotAll += len(slots) * len(groups)
			if !ok {
				if sh.Lifetime > 0 {
					t.Fatalf("%+v: variable %d: slotPairs gave up", sh, v)
				}
				gaveUp++
				continue
			}
			want = want[:0]
			for i, sg := range slots {
				if len(sg.entries) == 0 {
					continue
				}
				first, last := &ix.acc[sg.entries[0].ai], &ix.acc[sg.entries[len(sg.entries)-1].aj]
				for j, fg := range groups {
					if fg.key.g != sg.key.g && fg.key.write == sg.key.fWrite &&
						fg.ep[len(fg.ep)-1] > ix.clk(first.snap, fg.key.g) && last.ep > ix.clk(fg.snap[0], sg.key.g) {
						want = append(want, uint64(i)<<32|uint64(j))
					}
				}
			}
			if !slices.Equal(tpairs, want) {
				t.Fatalf("%+v: variable %d (%d slot groups, %d groups): %d slot pairs, want %d", sh, v, len(slots), len(groups), len(tpairs), len(want))
			}
			tripled += len(want)
			swept++
			tested += len(pairs)
			all += len(groups) * (len(groups) - 1) / 2
		}
		if swept == 0 && gaveUp == 0 {
			t.Fatalf("%+v: no variable with groups", sh)
		}
		if sh.Lifetime == 1 && groupTests*5 > all {
			t.Errorf("%+v: %d pairs of groups tested of %d, want under a fifth", sh, groupTests, all)
		}
		if sh.Lifetime > 0 && slotTests*3 > slotAll {
			t.Errorf("%+v: %d pairs of spans tested for %d pairs of slot groups and groups, want under a third", sh, slotTests, slotAll)
		}
		if sh.Lifetime == 0 && gaveUp == 0 {
			t.Errorf("%+v: the sweeps never gave up where every goroutine overlaps every other", sh)
		}
		t.Logf("%+v: %d variables, %d of %d pairs overlap, %d tested; %d of %d slot pairs, %d tested; gave up %d times", sh, swept, tested, all, groupTests, tripled, slotAll, slotTests, gaveUp)

		// The findings are those of trying every pair.
		got := Predict(tr, Options{}).Findings
		defer func(m int) { sweepMin = m }(sweepMin)
		sweepMin = math.MaxInt
		want := Predict(tr, Options{}).Findings
		sweepMin = 64
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %d findings with the sweep, %d without, or not the same", sh, len(got), len(want))
		}
		t.Logf("%d findings", len(got))
		if sh.Violations && len(got) == 0 {
			t.Errorf("%+v: no finding", sh)
		}
	}
}

// A snapshot made from the leaves that changed since its base
// (snapshotSince, with the happens-before engine's steps) holds the
// clock of its access's goroutine there, every component of it but the
// goroutine's own (which the search takes from the access's epoch, and
// which a release advances without a new snapshot), on traces of
// short-lived goroutines, channels closed per goroutine, and long-lived
// goroutines.
func TestSnapshotSince(t *testing.T) {
	for _, sh := range []tracegen.Shape{
		{Seed: 5, Events: 30000, Goroutines: 8, Lifetime: 1},
		{Seed: 6, Events: 30000, Goroutines: 16, Vars: 8, Locks: 4, Lifetime: 2, Interleaved: true, Unlocked: 0.2, Violations: true},
		{Seed: 7, Events: 30000, Goroutines: 64, Vars: 64, Locks: 16, Interleaved: true, Nesting: 2},
	} {
		tr := tracegen.ShapeTrace(sh)
		if err := trace.Validate(tr); err != nil {
			t.Fatal(err)
		}
		ix := buildIndex(tr)
		accOf := make(map[uint32]patAccess, len(ix.acc)) // by event
		for _, a := range ix.acc {
			accOf[a.ev] = a
		}
		h := NewHB(HBOptions{Object: tr.Object})
		checked := 0
		for i := range tr.Events {
			vc := h.Step(&tr.Events[i])
			a, ok := accOf[uint32(i)]
			if !ok {
				continue
			}
			checked++
			for g := range uint32(len(ix.gids)) {
				if got, want := ix.clk(a.snap, g), vc.Get(int(g)); g != a.g && got != want {
					t.Fatalf("%+v: event %d: component %d of its snapshot is %d, want %d", sh, i, g, got, want)
				}
			}
		}
		if checked == 0 {
			t.Fatalf("%+v: no access checked", sh)
		}
		t.Logf("%+v: %d goroutines, %d snapshots of %d accesses checked, %d nodes", sh, len(ix.gids), len(ix.snaps), checked, ix.clocks.nodeCount())
	}
}
