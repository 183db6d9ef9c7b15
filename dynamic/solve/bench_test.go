package solve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchBudget is the budget of every benchmarked Check, as the precise
// stage's default would be.
var benchBudget = Budget{Time: 10 * time.Second}

// benchWindow measures what the precise stage does per candidate: a fresh
// solver for a window of n events, the window's constraints, and one Check
// of a candidate. A new window is drawn every third candidate. It reports
// the median and worst time of the Check alone (wall clock, and CPU time of
// this process: an external solver's own CPU time is not in it), and
// candidates per second including building the constraints.
func benchWindow(b *testing.B, e engine, n int) {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	var times, cpu []time.Duration
	var statuses [3]int
	var w *window
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		if i%3 == 0 {
			w = randomWindow(r, n, 4, 3, 8)
		}
		s := e.new(b, n, benchBudget)
		w.encode(s)
		as := w.candidate(r, s)
		t0, c0 := time.Now(), cpuTime()
		st := s.Check(as...)
		times = append(times, time.Since(t0))
		cpu = append(cpu, cpuTime()-c0)
		statuses[st]++
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	total := time.Since(start)
	slices.Sort(times)
	slices.Sort(cpu)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms/check")
	b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "worst-ms/check")
	b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "median-cpu-ms/check")
	b.ReportMetric(float64(cpu[len(cpu)-1].Microseconds())/1000, "worst-cpu-ms/check")
	b.ReportMetric(float64(len(times))/total.Seconds(), "checks/s")
	b.ReportMetric(float64(statuses[Sat]), "sat")
	b.ReportMetric(float64(statuses[Unsat]), "unsat")
	b.ReportMetric(float64(statuses[Unknown]), "unknown")
}

func BenchmarkCheck(b *testing.B) {
	for _, e := range engines(b) {
		for _, n := range []int{200, 1000} {
			b.Run(fmt.Sprintf("%s/n=%d", e.name, n), func(b *testing.B) { benchWindow(b, e, n) })
		}
	}
}
