package predict

import (
	"reflect"
	"testing"

	"github.com/avcheck/avcheck/internal/tracegen"
)

// TestPrefixStateRewind checks that a prefixState moved back through its
// checkpoints equals one replayed from the start.
func TestPrefixStateRewind(t *testing.T) {
	tr := tracegen.Trace(tracegen.Config{Seed: 9, Events: 3 * checkpointEvery, Goroutines: 4, Locks: 6, RWLocks: 2})
	p := newPrefixState()
	p.advance(tr, uint32(len(tr.Events)))
	for _, at := range []uint32{uint32(len(tr.Events)) - 5, 2*checkpointEvery + 7, checkpointEvery, checkpointEvery - 1, 3, 0} {
		p.advance(tr, at)
		q := newPrefixState()
		q.advance(tr, at)
		if p.at != q.at || !reflect.DeepEqual(p.writer, q.writer) || !reflect.DeepEqual(p.wg, q.wg) || !reflect.DeepEqual(p.readers, q.readers) {
			t.Fatalf("at %d: rewound state differs from replayed", at)
		}
	}
}

// TestPrefixStateList checks that a prefixState replaying only the events
// that change it (syncMeta.stateEvs) goes through the same states and
// takes the same checkpoints as one replaying every event, forwards and
// back.
func TestPrefixStateList(t *testing.T) {
	tr := tracegen.Trace(tracegen.Config{Seed: 4, Events: 3 * checkpointEvery, Goroutines: 4, Locks: 6, RWLocks: 2, Vars: 4})
	m := newSyncMeta(tr)
	p, full := m.newPrefixState(), newPrefixState()
	n := uint32(len(tr.Events))
	for _, at := range []uint32{0, 5, checkpointEvery - 1, checkpointEvery, checkpointEvery + 1, 2*checkpointEvery + 7, n - 5, n, 3, 2 * checkpointEvery, n - 1} {
		p.advance(tr, at)
		full.advance(tr, at)
		if p.at != full.at || !reflect.DeepEqual(p.writer, full.writer) || !reflect.DeepEqual(p.wg, full.wg) || !reflect.DeepEqual(p.readers, full.readers) {
			t.Fatalf("at %d: the state replayed through the list differs", at)
		}
		if len(p.checkpoints) != len(full.checkpoints) {
			t.Fatalf("at %d: %d checkpoints, want %d", at, len(p.checkpoints), len(full.checkpoints))
		}
		for k, c := range p.checkpoints {
			f := full.checkpoints[k]
			if c.at != f.at || !reflect.DeepEqual(c.writer, f.writer) || !reflect.DeepEqual(c.wg, f.wg) || !reflect.DeepEqual(c.readers, f.readers) {
				t.Fatalf("at %d: checkpoint %d (at %d) differs from the one at %d", at, k, c.at, f.at)
			}
		}
	}
}
