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
