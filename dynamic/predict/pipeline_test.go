package predict

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// TestPredictWorkers checks that the findings, their witnesses and the
// precise stage's counts do not depend on how many workers decide the
// candidates, nor on the run: the workers' outcomes are put together in
// candidate order, and the precise stage's encoding does not depend on a
// map's order.
func TestPredictWorkers(t *testing.T) {
	cfg := tracegen.Config{Seed: 1, Events: 60_000, Goroutines: 8, Locks: 16, RWLocks: 4, Vars: 64, MaxNesting: 3, Chans: 4, Regions: 16}
	tr, err := trace.ReadAll(tracegen.New(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var want *Result
	for _, procs := range []int{1, 2, 3, 2} {
		runtime.GOMAXPROCS(procs)
		res := Predict(tr, Options{All: true, Precise: true})
		res.Precise.Time = 0
		if want == nil {
			want = res
			if len(res.Findings) == 0 || res.Precise.Checks == 0 || res.Precise.Proven == 0 {
				t.Fatalf("the trace gives %d findings, %d checks, %d proven: the test covers nothing", len(res.Findings), res.Precise.Checks, res.Precise.Proven)
			}
			continue
		}
		if !reflect.DeepEqual(res, want) {
			t.Fatalf("GOMAXPROCS=%d: the result differs from GOMAXPROCS=1's:\n%+v\nwant\n%+v", procs, res.Precise, want.Precise)
		}
	}
}

// TestPreciseStatsAdd checks that the counts of the candidates are summed
// and each error kept once, where it first occurs in candidate order.
func TestPreciseStatsAdd(t *testing.T) {
	var s PreciseStats
	seen := map[string]bool{}
	s.add(&PreciseStats{Checks: 2, Proven: 1, Errors: []string{"a"}}, seen)
	s.add(&PreciseStats{Checks: 3, Infeasible: 1, Rejected: []string{"b", "a"}, Errors: []string{"c"}}, seen)
	s.add(&PreciseStats{Checks: 1, Unknown: 1, Rejected: []string{"b"}, Errors: []string{"c", "d"}}, seen)
	want := PreciseStats{Checks: 6, Proven: 1, Infeasible: 1, Unknown: 1, Rejected: []string{"b"}, Errors: []string{"a", "c", "d"}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got %+v, want %+v", s, want)
	}
}
