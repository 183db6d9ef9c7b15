package predict

import (
	gomaps "maps"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// naivePrefix is the state of locks and WaitGroups after events [0, to)
// of tr, replayed event by event into maps: the definition prefixState's
// dense, checkpointed replay must agree with.
type naivePrefix struct {
	writer  map[trace.ObjID]trace.GoID
	readers map[trace.ObjID]int32
	wg      map[trace.ObjID]int64
}

func replayNaive(tr *trace.Trace, to uint32) naivePrefix {
	n := naivePrefix{writer: map[trace.ObjID]trace.GoID{}, readers: map[trace.ObjID]int32{}, wg: map[trace.ObjID]int64{}}
	held := map[[2]uint64]int32{} // (lock, goroutine) -> read holds
	for i := range to {
		e := &tr.Events[i]
		k := [2]uint64{uint64(e.Obj), uint64(e.G)}
		switch e.Kind {
		case trace.KindAcquire:
			n.writer[e.Obj] = e.G
		case trace.KindRelease:
			delete(n.writer, e.Obj)
		case trace.KindRAcquire:
			held[k]++
			n.readers[e.Obj]++
		case trace.KindRRelease:
			if held[k] > 0 {
				held[k]--
				n.readers[e.Obj]--
			}
		case trace.KindWGAdd:
			n.wg[e.Obj] += int64(e.Arg)
		case trace.KindWGDone:
			n.wg[e.Obj]--
		}
	}
	gomaps.DeleteFunc(n.readers, func(_ trace.ObjID, c int32) bool { return c == 0 })
	gomaps.DeleteFunc(n.wg, func(_ trace.ObjID, c int64) bool { return c == 0 })
	return n
}

// naive reads the same state out of a prefixState.
func (p *prefixState) naive() naivePrefix {
	n := naivePrefix{writer: map[trace.ObjID]trace.GoID{}, readers: map[trace.ObjID]int32{}, wg: map[trace.ObjID]int64{}}
	for _, obj := range p.m.stateObjs {
		if g, ok := p.writerOf(obj); ok {
			n.writer[obj] = g
		}
		if c := p.readHolds(obj); c != 0 {
			n.readers[obj] = c
		}
		if c := p.wgCounter(obj); c != 0 {
			n.wg[obj] = c
		}
	}
	return n
}

func (n naivePrefix) equal(o naivePrefix) bool {
	return gomaps.Equal(n.writer, o.writer) && gomaps.Equal(n.readers, o.readers) && gomaps.Equal(n.wg, o.wg)
}

// TestPrefixState checks that a prefixState moved forwards and back
// holds the state an event-by-event replay from the start gives, at
// every position of a trace of locks, read locks and WaitGroups, and at
// positions far apart in one of a million events.
func TestPrefixState(t *testing.T) {
	small := tracegen.Trace(tracegen.Config{Seed: 4, Events: 3000, Goroutines: 4, Locks: 6, RWLocks: 2, Vars: 4, SyncProb: 0.1})
	large := tracegen.Trace(tracegen.Config{Seed: 4, Events: 1 << 20, Goroutines: 4, Locks: 6, RWLocks: 2, Vars: 4})
	for _, tc := range []struct {
		tr *trace.Trace
		at []uint32
	}{
		{small, nil},
		{large, []uint32{0, 5, 1 << 18, 1<<18 + 1, 1<<19 + 7, uint32(len(large.Events)) - 5, uint32(len(large.Events)), 3, 1 << 19, 1<<18 - 1, 0}},
	} {
		tr := tc.tr
		m := newSyncMeta(tr)
		p := m.newPrefixState()
		at := tc.at
		if at == nil {
			// Every position, forwards, then some back.
			for i := range uint32(len(tr.Events)) + 1 {
				at = append(at, i)
			}
			at = append(at, 17, 2000, 1)
		}
		held, counted := 0, 0 // positions where some lock is held, some WaitGroup counts
		for _, a := range at {
			p.advance(a)
			if p.at != a {
				t.Fatalf("advanced to %d, at %d", a, p.at)
			}
			want := replayNaive(tr, a)
			if got := p.naive(); !got.equal(want) {
				t.Fatalf("at %d: the state %+v differs from an event-by-event replay's %+v", a, got, want)
			}
			if len(want.writer) > 0 || len(want.readers) > 0 {
				held++
			}
			if len(want.wg) > 0 {
				counted++
			}
		}
		if held < 3 || tr == small && counted < 3 {
			t.Fatalf("locks held at %d of the positions, WaitGroups counting at %d; the test trace should hold some more often", held, counted)
		}
	}
}
