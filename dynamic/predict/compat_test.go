package predict

import (
	"testing"

	"github.com/avcheck/avcheck/internal/tracegen"
)

// TestCompatBits checks the search's bit-set test of lock states
// (compatBits) against its general way (compatSlow) and against
// Locks.Compatible, on every pair of lock states of random traces with
// nested mutexes and RWMutexes, including states too deep for bit sets.
func TestCompatBits(t *testing.T) {
	pairs, incompatible, general := 0, 0, 0
	for seed := range uint64(40) {
		cfg := tracegen.Config{Seed: seed, Events: 3000, Goroutines: 2 + int(seed%4), Locks: 3 + int(seed%6),
			RWLocks: int(seed % 3), MaxNesting: 1 + int(seed%5), LockProb: 0.3}
		tr := tracegen.Trace(cfg)
		ix := buildIndex(tr)
		ix.computeMasks()
		s := newSearch(ix)
		var states []HistoryID
		seen := map[HistoryID]bool{}
		for _, log := range ix.glog {
			for _, h := range log {
				if !seen[h] {
					seen[h] = true
					states = append(states, h)
				}
			}
		}
		for _, a := range states {
			if !ix.hBits[a].ok {
				general++
			}
			for _, b := range states {
				got, slow, want := s.compat(a, b), s.compatSlow(a, b), ix.locks.Compatible(a, b)
				if got != want || slow != want {
					t.Fatalf("seed %d: states %d and %d: compat %v, compatSlow %v, Locks.Compatible %v", seed, a, b, got, slow, want)
				}
				pairs++
				if !want {
					incompatible++
				}
			}
		}
	}
	// The traces must exercise both answers and both ways.
	if incompatible == 0 || incompatible == pairs || general == 0 {
		t.Fatalf("%d pairs, %d incompatible, %d states too deep for bit sets: the traces do not exercise the test", pairs, incompatible, general)
	}
	t.Logf("%d pairs, %d incompatible, %d states too deep for bit sets", pairs, incompatible, general)
}
