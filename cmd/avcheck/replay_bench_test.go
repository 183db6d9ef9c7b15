package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/record"
	"github.com/avcheck/avcheck/dynamic/replay"
)

// BenchmarkReplayCorpus replays the witness of every proven finding of
// the corpus (each test of testdata/README.md's blocks) and of the
// programs of testdata/record that have tests, recorded under Delve as
// avcheck run records them, one replay at a time, each in a process of
// its own as avcheck run starts it. It logs each finding's outcome and
// time, and reports the median and longest time of a replay and the
// share of proven findings raised to replayed.
//
//	go test ./cmd/avcheck -run '^$' -bench ReplayCorpus -benchtime 1x -v
func BenchmarkReplayCorpus(b *testing.B) {
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	type target struct{ pkg, test, tags string }
	var targets []target
	entries, _ := parseCorpus(b)
	for _, e := range entries {
		targets = append(targets, target{"./testdata/corpus/" + e.dir, e.test, ""})
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "testdata/record/*"))
	for _, d := range dirs {
		if tests, _ := filepath.Glob(filepath.Join(d, "*_test.go")); len(tests) > 0 {
			// A test behind a build tag (testdata/record/tagged) is
			// built with it.
			data, _ := os.ReadFile(tests[0])
			first, _, _ := strings.Cut(string(data), "\n")
			tag, _ := strings.CutPrefix(first, "//go:build ")
			if tag == first || strings.ContainsAny(tag, " !&|()") {
				tag = ""
			}
			targets = append(targets, target{"./testdata/record/" + filepath.Base(d), "", tag})
		}
	}
	for b.Loop() {
		var times []time.Duration
		proven, raised := 0, 0
		for _, tg := range targets {
			plan, err := record.MakePlan(record.PlanOptions{Dir: root, Pattern: tg.pkg, Tags: tg.tags})
			if err != nil {
				b.Fatal(err)
			}
			bin, cleanup, err := record.Build(context.Background(), root, tg.pkg, false, plan)
			if err != nil {
				cleanup()
				b.Fatal(err)
			}
			args := []string{"-test.timeout=0"}
			if tg.test != "" {
				args = append([]string{"-test.run=^" + tg.test + "$"}, args...)
			}
			dir := filepath.Join(root, tg.pkg)
			tr, oc, err := record.Record(context.Background(), plan, record.Options{Binary: bin, Args: args, Dir: dir, Output: io.Discard, Timeout: time.Minute})
			if errors.Is(err, record.ErrPtrace) {
				cleanup()
				b.Skip(err)
			}
			if err != nil {
				cleanup()
				b.Fatal(err)
			}
			res := predict.Predict(tr, predict.Options{Precise: true})
			opts := replayOptions{binary: bin, args: args, dir: dir, timeout: defaultReplayTimeout, recordedFailed: !oc.Complete || oc.Status != 0}
			for _, f := range res.Findings {
				if !replayable(&f) {
					continue
				}
				proven++
				w, err := replay.FromTrace(tr, f, plan)
				outcome := ""
				var took time.Duration
				if err != nil {
					outcome = "not confirmed: " + err.Error()
				} else {
					start := time.Now()
					r, err := replayOne(context.Background(), self, w, opts)
					took = time.Since(start)
					times = append(times, took)
					switch o := replay.Observe(tr, f, w, r, opts.recordedFailed); {
					case err != nil:
						outcome = "not confirmed: " + err.Error()
					case o.Confirmed:
						outcome = "replayed: " + o.Text
						raised++
					default:
						outcome = "not confirmed: " + o.Text
					}
				}
				b.Logf("%s %s: %s %s %s: %.2fs: %s", strings.TrimPrefix(tg.pkg, "./testdata/"), tg.test, f.Kind, f.Pattern, f.Var, took.Seconds(), outcome)
			}
			cleanup()
		}
		if len(times) > 0 {
			slices.Sort(times)
			b.ReportMetric(times[len(times)/2].Seconds(), "median-s/replay")
			b.ReportMetric(times[len(times)-1].Seconds(), "longest-s/replay")
		}
		b.ReportMetric(float64(proven), "proven")
		b.ReportMetric(float64(raised), "replayed")
		b.Logf("%d proven findings, %d replayed", proven, raised)
	}
}
