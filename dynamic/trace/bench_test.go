package trace_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// benchConfig is the benchmarks' trace shape: 8 goroutines, 16 locks.
func benchConfig(events int) tracegen.Config {
	return tracegen.Config{Seed: 1, Events: events, Goroutines: 8, Locks: 16, RWLocks: 4, Vars: 64, MaxNesting: 3, Chans: 4}
}

// writeBenchTrace generates a trace of about n events into dir in format
// f and returns its path and exact event count.
func writeBenchTrace(b *testing.B, dir string, f trace.Format, n int) (string, int64) {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("bench-%d.%s", n, f))
	events, err := trace.WriteFile(path, f, tracegen.New(benchConfig(n)))
	if err != nil {
		b.Fatal(err)
	}
	return path, events
}

func newReader(f trace.Format, r io.Reader) trace.Reader {
	switch f {
	case trace.FormatNative:
		return trace.NewBinaryReader(r, "bench")
	case trace.FormatText:
		return trace.NewTextReader(r, "bench")
	}
	return trace.NewSTDReader(r, "bench")
}

// BenchmarkParse measures decoding 1M and 10M generated events from a
// file in each format, reporting events per second.
func BenchmarkParse(b *testing.B) {
	for _, f := range []trace.Format{trace.FormatNative, trace.FormatText, trace.FormatSTD} {
		for _, n := range []int{1_000_000, 10_000_000} {
			b.Run(fmt.Sprintf("%s/%dM", f, n/1_000_000), func(b *testing.B) {
				path, _ := writeBenchTrace(b, b.TempDir(), f, n)
				st, _ := os.Stat(path)
				b.SetBytes(st.Size())
				b.ReportAllocs()
				var events int64
				cpu := time.Duration(-1)
				for b.Loop() {
					if cpu < 0 {
						cpu = cpuTime()
					}
					file, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					r := newReader(f, file)
					for {
						_, err := r.Next()
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						events++
					}
					file.Close()
				}
				cpu = cpuTime() - cpu
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
				if cpu > 0 {
					b.ReportMetric(float64(events)/cpu.Seconds(), "events/cpu-s")
				}
				b.ReportMetric(float64(st.Size())/float64(events/int64(b.N)), "B/event")
			})
		}
	}
}

// BenchmarkWrite measures encoding 1M generated events in each format
// (generation included, and measured alone as "gen").
func BenchmarkWrite(b *testing.B) {
	const n = 1_000_000
	b.Run("gen", func(b *testing.B) {
		var events int64
		for b.Loop() {
			g := tracegen.New(benchConfig(n))
			for {
				if _, err := g.Next(); err != nil {
					break
				}
				events++
			}
		}
		b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	})
	for _, f := range []trace.Format{trace.FormatNative, trace.FormatText, trace.FormatSTD} {
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			var events int64
			for b.Loop() {
				var w trace.Writer
				bw := bufio.NewWriter(io.Discard)
				switch f {
				case trace.FormatNative:
					w = trace.NewBinaryWriter(bw)
				case trace.FormatText:
					w = trace.NewTextWriter(bw)
				default:
					w = trace.NewSTDWriter(bw, io.Discard)
				}
				m, err := trace.Copy(w, tracegen.New(benchConfig(n)))
				if err != nil {
					b.Fatal(err)
				}
				events += m
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
