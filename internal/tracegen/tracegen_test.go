package tracegen

import (
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

func TestValid(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		cfg := Config{Seed: seed, Events: 50 + int(seed)*10, Goroutines: 1 + int(seed%6), Locks: 1 + int(seed%5), RWLocks: int(seed % 3), MaxNesting: 1 + int(seed%3), SyncProb: 0.2}
		tr := Trace(cfg)
		if err := trace.Validate(tr); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
