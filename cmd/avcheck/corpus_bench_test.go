package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/record"
	"github.com/avcheck/avcheck/dynamic/report"
)

// benchCorpus are the corpus tests the benchmarks measure: the largest
// trace (bank-av with 8 goroutines), its fixed twin, and the README's
// example.
var benchCorpus = []struct{ dir, test string }{
	{"bank-av", "TestBank8"},
	{"bank-nav", "TestBank8"},
	{"splitcounter", "TestInc"},
}

// BenchmarkCorpusRecord measures recording alone: record.Record on the
// test binary built with -gcflags=all=-N -l, against running the same
// binary without the debugger. It reports the recorded events per second
// (launch and exit included) and the slowdown (x-slower).
//
//	go test -run XXX -bench CorpusRecord ./cmd/avcheck
func BenchmarkCorpusRecord(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range benchCorpus {
		b.Run(e.dir+"/"+e.test, func(b *testing.B) {
			pkg := "./testdata/corpus/" + e.dir
			dir := filepath.Join(root, "testdata/corpus", e.dir)
			plan, err := record.MakePlan(record.PlanOptions{Dir: root, Pattern: pkg})
			if err != nil {
				b.Fatal(err)
			}
			bin, cleanup, err := record.Build(context.Background(), root, pkg, false, plan)
			b.Cleanup(cleanup)
			if err != nil {
				b.Fatal(err)
			}
			args := []string{"-test.run=^" + e.test + "$"}
			plain := fastest(b, 5, func() error {
				cmd := exec.Command(bin, args...)
				cmd.Dir = dir
				return cmd.Run()
			})
			events, runs := 0, 0
			var recording time.Duration
			for b.Loop() {
				start := time.Now()
				tr, oc, err := record.Record(context.Background(), plan, record.Options{Binary: bin, Args: args, Dir: dir, Output: io.Discard})
				recording += time.Since(start)
				if errors.Is(err, record.ErrPtrace) {
					b.Skip(err)
				}
				if err != nil || !oc.Complete {
					b.Fatalf("%v %+v", err, oc)
				}
				events += len(tr.Events)
				runs++
			}
			b.ReportMetric(float64(events)/recording.Seconds(), "events/s")
			b.ReportMetric(float64(events)/float64(runs), "events/run")
			b.ReportMetric(recording.Seconds()/float64(runs)/plain.Seconds(), "x-slower")
		})
	}
}

// BenchmarkCorpusRun measures avcheck run end to end (plan, build,
// record, predict with the precise stage, report) against go test -count=1
// of the same test, both with Go's build cache warm. It reports the
// slowdown (x-slower) and the events per second of the whole command.
//
//	go test -run XXX -bench CorpusRun ./cmd/avcheck
func BenchmarkCorpusRun(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range benchCorpus {
		b.Run(e.dir+"/"+e.test, func(b *testing.B) {
			pkg := "./testdata/corpus/" + e.dir
			plain := fastest(b, 3, func() error {
				cmd := exec.Command("go", "test", "-count=1", "-run=^"+e.test+"$", pkg)
				cmd.Dir = root
				return cmd.Run()
			})
			events, runs := 0, 0
			var total time.Duration
			for b.Loop() {
				var stdout, stderr bytes.Buffer
				start := time.Now()
				code := runMain(context.Background(), []string{"-json", "-report", filepath.Join(b.TempDir(), "report.json"), filepath.Join(root, pkg), "-run", "^" + e.test + "$"}, &stdout, &stderr)
				total += time.Since(start)
				if code != exitClean && code != exitFindings {
					b.Fatalf("exit %d\n%s", code, stderr.String())
				}
				var doc report.Document
				if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
					b.Fatal(err)
				}
				events += doc.Stats.Events
				runs++
			}
			b.ReportMetric(float64(events)/total.Seconds(), "events/s")
			b.ReportMetric(total.Seconds()/float64(runs)/plain.Seconds(), "x-slower")
		})
	}
}

// fastest runs f n times and returns its shortest duration.
func fastest(b *testing.B, n int, f func() error) time.Duration {
	b.Helper()
	best := time.Duration(1<<63 - 1)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}
