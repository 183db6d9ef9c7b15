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

// TestPrefixState checks that a prefixState moved forwards, and back
// through its checkpoints, holds the state an event-by-event replay from
// the start gives, and that its checkpoints do too.
func TestPrefixState(t *testing.T) {
	tr := tracegen.Trace(tracegen.Config{Seed: 4, Events: 3 * checkpointEvery, Goroutines: 4, Locks: 6, RWLocks: 2, Vars: 4})
	m := newSyncMeta(tr)
	p := m.newPrefixState()
	n := uint32(len(tr.Events))
	held := 0 // positions where some lock is held
	for _, at := range []uint32{0, 5, checkpointEvery - 1, checkpointEvery, checkpointEvery + 1, 2*checkpointEvery + 7, n - 5, n, 3, 2 * checkpointEvery, n - 1, checkpointEvery - 1, 0} {
		p.advance(at)
		if p.at != at {
			t.Fatalf("advanced to %d, at %d", at, p.at)
		}
		want := replayNaive(tr, at)
		if !p.naive().equal(want) {
			t.Fatalf("at %d: the state differs from an event-by-event replay", at)
		}
		if len(want.writer) > 0 || len(want.readers) > 0 {
			held++
		}
		for k, c := range p.checkpoints {
			if c.at != uint32(k+1)*checkpointEvery {
				t.Fatalf("at %d: checkpoint %d is at %d", at, k, c.at)
			}
			if !c.naive().equal(replayNaive(tr, c.at)) {
				t.Fatalf("at %d: checkpoint %d (at %d) differs from an event-by-event replay", at, k, c.at)
			}
		}
	}
	if held < 3 {
		t.Fatalf("locks held at %d of the positions; the test trace should hold some more often", held)
	}
}
