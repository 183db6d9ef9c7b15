//go:build unix

package predict

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// coreBenchConfig is the core engines' benchmark shape: 8 goroutines, 16
// locks (4 of them RWMutexes) nested up to 3 deep, 64 shared and 2
// unshared variables per goroutine, 4 channels, WaitGroup, Once and
// atomics, and regions.
func coreBenchConfig(events int) tracegen.Config {
	return tracegen.Config{Seed: 1, Events: events, Goroutines: 8, Locks: 16, RWLocks: 4, Vars: 64, MaxNesting: 3, Chans: 4}
}

// BenchmarkCore measures happens-before, locksets, meta-analysis and
// observed mode over a generated trace held in memory (so that only the
// engine is timed), and observed mode end to end from an STD file. It
// reports events per second of wall time and per second of the process's
// CPU time (user and system, garbage collection included), which stays
// meaningful on a loaded machine, and live-MB, the memory the engine holds
// at the end of the trace (which the streaming engines keep independent of
// the trace's length); B/op is per pass over the whole trace.
// (The file is for unix systems because it reads the CPU time with
// getrusage.)
//
//	go test ./dynamic/predict -run '^$' -bench Core -benchtime 3x
func BenchmarkCore(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("%dM", n/1_000_000), func(b *testing.B) {
			gen := tracegen.New(coreBenchConfig(n))
			tr := &trace.Trace{Objects: map[trace.ObjID]trace.Object{}}
			for {
				e, err := gen.Next()
				if err != nil {
					break
				}
				tr.Events = append(tr.Events, e)
			}
			tr.Objects = nil
			object := gen.Object
			events := float64(len(tr.Events))
			// A pass returns its engine, still holding its state, so that
			// the live heap it leaves (after a collection, less what was
			// live before) is the engine's memory at the end of the trace.
			run := func(name string, pass func() any) {
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					var ms runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&ms)
					before := ms.HeapAlloc
					var engine any
					c0 := cpuTime()
					for b.Loop() {
						engine = pass()
					}
					cpu := cpuTime() - c0
					runtime.GC()
					runtime.ReadMemStats(&ms)
					runtime.KeepAlive(engine)
					b.ReportMetric(events*float64(b.N)/b.Elapsed().Seconds(), "events/s")
					b.ReportMetric(events*float64(b.N)/cpu.Seconds(), "events/cpu-s")
					b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(before))/1e6, "live-MB")
					b.ReportMetric(0, "ns/op")
				})
			}
			run("hb", func() any {
				h := NewHB(HBOptions{Object: object})
				for i := range tr.Events {
					h.Step(&tr.Events[i])
				}
				return h
			})
			run("locks", func() any {
				l := NewLocks()
				for i := range tr.Events {
					l.Step(&tr.Events[i])
				}
				return l
			})
			run("meta", func() any {
				m := NewMeta(MetaOptions{Object: object})
				for i := range tr.Events {
					m.Step(&tr.Events[i])
				}
				_ = m.Findings()
				return m
			})
			run("observed", func() any {
				o := NewObserved(ObservedOptions{Object: object})
				for i := range tr.Events {
					o.Step(&tr.Events[i])
				}
				_ = o.Finish()
				return o
			})
			path := filepath.Join(b.TempDir(), "core.std")
			if _, err := trace.WriteFile(path, trace.FormatSTD, &sliceReader{tr: tr, site: gen.Site, object: object}); err != nil {
				b.Fatal(err)
			}
			run("observed-std", func() any {
				f, err := trace.Open(path, trace.FormatSTD)
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				if _, err := CheckObserved(f); err != nil {
					b.Fatal(err)
				}
				return nil
			})
		})
	}
}

// sliceReader streams an in-memory trace.
type sliceReader struct {
	tr     *trace.Trace
	site   func(trace.SiteID) trace.Site
	object func(trace.ObjID) trace.Object
	i      int
}

func (r *sliceReader) Next() (trace.Event, error) {
	if r.i >= len(r.tr.Events) {
		return trace.Event{}, io.EOF
	}
	r.i++
	return r.tr.Events[r.i-1], nil
}

func (r *sliceReader) Site(id trace.SiteID) trace.Site    { return r.site(id) }
func (r *sliceReader) Object(id trace.ObjID) trace.Object { return r.object(id) }

// cpuTime returns the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
