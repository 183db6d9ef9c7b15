package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

var (
	shapeEvents = flag.Int("shapes.events", 1_000_000, "events of each trace of BenchmarkPredictShapes")
	shapeDir    = flag.String("shapes.dir", "", "directory to write BenchmarkPredictShapes' traces to and keep them in (a temporary one if empty)")
	shapeDrawn  = flag.Int("shapes.drawn", 20_000, "most events of BenchmarkPredictShapes' violating traces whose code is drawn afresh for each unit (their findings grow with the trace: 555K at 100K events)")
)

// benchShapes is the sweep of BenchmarkPredictShapes: each dimension of
// tracegen.Shape from one end to the other, on and around the shape of
// BenchmarkPredictCommand's trace, and the shapes of long test runs that
// first showed the prediction not scaling (many variables, no finding;
// nested locks and unlocked accesses, many findings; thousands of
// short-lived goroutines, as a worker pool's tests start; a region
// around a long loop that takes many locks inside an outer one, as a
// cache's tests run). The violating shapes come twice: with code drawn
// afresh for each unit, whose findings' site combinations grow with the
// trace (millions of them, the worst case), and with Fixed code paths,
// a program's, whose combinations the code bounds.
var benchShapes = []tracegen.Shape{
	{Goroutines: 8, Locks: 16, Vars: 64},
	{Goroutines: 8, Locks: 16, Vars: 1024, Interleaved: true},
	{Goroutines: 8, Locks: 16, Vars: 64, Nesting: 3, Unlocked: 0.05, Interleaved: true, Violations: true},
	{Goroutines: 2, Locks: 1, Vars: 16, Interleaved: true, Violations: true},
	{Goroutines: 8, Locks: 16, Vars: 64, Nesting: 4, Violations: true},
	{Goroutines: 4, Locks: 4, Vars: 16, Nesting: 2, Unlocked: 0.2, Interleaved: true, Violations: true},
	{Goroutines: 64, Locks: 64, Vars: 4096, Nesting: 2, Unlocked: 0.1, Interleaved: true},
	{Goroutines: 64, Locks: 1024, Vars: 16384},
	{Goroutines: 16, Locks: 1024, Vars: 100_000, Nesting: 4, Unlocked: 0.2, Interleaved: true},
	{Goroutines: 32, Locks: 256, Vars: 100_000, Nesting: 2, Unlocked: 0.2, Interleaved: true, Violations: true},
	{Goroutines: 16, Locks: 16, Vars: 64, Lifetime: 32},
	{Goroutines: 8, Locks: 1024, Vars: 100_000, Nesting: 2, Long: 1024},
	{Goroutines: 8, Locks: 16, Vars: 64, Nesting: 3, Unlocked: 0.05, Interleaved: true, Violations: true, Fixed: true},
	{Goroutines: 2, Locks: 1, Vars: 16, Interleaved: true, Violations: true, Fixed: true},
	{Goroutines: 8, Locks: 16, Vars: 64, Nesting: 4, Violations: true, Fixed: true},
	{Goroutines: 4, Locks: 4, Vars: 16, Nesting: 2, Unlocked: 0.2, Interleaved: true, Violations: true, Fixed: true},
	{Goroutines: 32, Locks: 256, Vars: 100_000, Nesting: 2, Unlocked: 0.2, Interleaved: true, Violations: true, Fixed: true},
}

// BenchmarkPredictShapes measures "avcheck predict" end to end on the
// traces of benchShapes, written as STD files, in observed mode and in
// prediction (precise stage on, its default budget): events per second
// of wall time, the peak of the memory the Go runtime holds from the
// system during the run (peak-MB, and per event), and the findings
// reported.
//
//	go test ./cmd/avcheck -run '^$' -bench PredictShapes -benchtime 1x -args -shapes.events=10000000
func BenchmarkPredictShapes(b *testing.B) {
	dir := *shapeDir
	if dir == "" {
		dir = b.TempDir()
	}
	for i, s := range benchShapes {
		s.Seed = uint64(i + 1)
		s.Events = *shapeEvents
		if s.Violations && !s.Fixed {
			s.Events = min(s.Events, *shapeDrawn)
		}
		b.Run(s.String(), func(b *testing.B) {
			path := filepath.Join(dir, fmt.Sprintf("shape%d-%dk.std", i, s.Events/1000))
			if _, err := os.Stat(path); err != nil {
				if _, err := trace.WriteFile(path, trace.FormatSTD, tracegen.NewShape(s)); err != nil {
					b.Fatal(err)
				}
			}
			events := countEvents(b, path)
			for _, mode := range []string{"observed", "predict"} {
				b.Run(mode, func(b *testing.B) {
					var peak uint64
					findings := 0
					for b.Loop() {
						var out countWriter
						stopPeak := samplePeak(&peak)
						code := predictMain([]string{"-mode=" + mode, path}, &out, io.Discard)
						stopPeak()
						if code == exitError || code == exitUsage {
							b.Fatalf("exit %d", code)
						}
						findings = out.findings
					}
					b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
					b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
					b.ReportMetric(float64(peak)/float64(events), "B/event")
					b.ReportMetric(float64(findings), "findings")
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}

// countWriter counts the findings of a text report: the lines that do
// not start with a tab.
type countWriter struct {
	findings int
	midLine  bool
}

func (w *countWriter) Write(p []byte) (int, error) {
	for _, c := range p {
		if !w.midLine && c != '\t' {
			w.findings++
		}
		w.midLine = c != '\n'
	}
	return len(p), nil
}

// samplePeak starts sampling the memory the Go runtime holds from the
// system (mapped less released) every few milliseconds, after a
// collection that returns what the previous run left, and returns the
// function that stops it; *peak is the largest sample.
func samplePeak(peak *uint64) (stop func()) {
	runtime.GC()
	debug.FreeOSMemory()
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64()-s[1].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
