package predict

import (
	"fmt"
	"sync"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// The benchmarks run the pattern search and the whole pipeline over
// synthetic traces of 1M and 10M events with 8 goroutines and 16 locks
// (internal/tracegen), reporting events per second. Run them with
//
//	go test -run '^$' -bench 'Pattern|Pipeline' -benchmem -benchtime=1x ./dynamic/predict
//
// Generating a trace takes longer than analysing it, so each size is
// generated once per process.

var benchTraces sync.Map // events -> *trace.Trace

func benchTrace(b *testing.B, events int) *trace.Trace {
	if t, ok := benchTraces.Load(events); ok {
		return t.(*trace.Trace)
	}
	t := tracegen.Trace(tracegen.Config{Seed: 1, Events: events, Goroutines: 8, Locks: 16, RWLocks: 4, Vars: 32, Regions: 16})
	benchTraces.Store(events, t)
	return t
}

func benchSizes(b *testing.B, run func(b *testing.B, t *trace.Trace)) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("events=%dM", n/1_000_000), func(b *testing.B) {
			if testing.Short() && n > 1_000_000 {
				b.Skip("10M events in -short mode")
			}
			t := benchTrace(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				run(b, t)
			}
			b.ReportMetric(float64(len(t.Events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func BenchmarkPatternSearch(b *testing.B) {
	benchSizes(b, func(b *testing.B, t *trace.Trace) {
		if len(SearchPatterns(t)) == 0 {
			b.Fatal("no findings on a random trace")
		}
	})
}

func BenchmarkPipeline(b *testing.B) {
	benchSizes(b, func(b *testing.B, t *trace.Trace) {
		Predict(t, Options{})
	})
}

// BenchmarkPipelineMeta is the pipeline with the meta-analysis engine
// beside the pattern search (-engine=all).
func BenchmarkPipelineMeta(b *testing.B) {
	benchSizes(b, func(b *testing.B, t *trace.Trace) {
		Predict(t, Options{Meta: true})
	})
}
