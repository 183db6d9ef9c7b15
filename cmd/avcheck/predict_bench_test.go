package main

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// BenchmarkPredictCommand measures "avcheck predict" end to end, as the
// issue's targets are stated: an STD file of 1M and 10M generated events
// (8 goroutines, 16 locks, 4 of them RWMutexes nested up to 3 deep, 64
// variables, 4 channels, 16 regions) read, validated and checked by
// observed mode and by prediction, with the report written to io.Discard.
// It reports the file's events per second of wall time; the STD import
// adds the events of joins, so there are a few more events than asked for.
//
//	go test ./cmd/avcheck -run '^$' -bench PredictCommand -benchtime 1x
func BenchmarkPredictCommand(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("%dM", n/1_000_000), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.std")
			cfg := tracegen.Config{Seed: 1, Events: n, Goroutines: 8, Locks: 16, RWLocks: 4, Vars: 64, MaxNesting: 3, Chans: 4, Regions: 16}
			w, err := trace.Create(path, trace.FormatSTD)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tracegen.Write(cfg, w); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			events := countEvents(b, path)
			for _, mode := range []string{"observed", "predict"} {
				b.Run(mode, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if code := predictMain([]string{"-mode=" + mode, path}, io.Discard, io.Discard); code == exitError || code == exitUsage {
							b.Fatalf("exit %d", code)
						}
					}
					b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
					b.ReportMetric(0, "ns/op")
				})
			}
		})
	}
}

// countEvents returns the number of events of a trace file.
func countEvents(b *testing.B, path string) int64 {
	f, err := trace.Open(path, trace.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n, err := trace.ValidateReader(f)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
