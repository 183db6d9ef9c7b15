package solve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchWindow measures Check on fresh solvers over random windows of n
// events: each iteration builds one window, encodes it and checks a few
// candidates, as the precise stage does per window. It reports the median
// and worst time of one Check and the checks per second.
func benchWindow(b *testing.B, e engine, n int) {
	r := rand.New(rand.NewPCG(uint64(n), 11))
	var times []time.Duration
	var statuses [3]int
	const perWindow = 4
	budget := Budget{Time: 10 * time.Second}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		w := randomWindow(r, n, 4, 3, 8)
		b.StartTimer()
		s := e.new(b, n, budget)
		w.encode(s)
		for range perWindow {
			as := w.candidate(r, s)
			t0 := time.Now()
			st := s.Check(as...)
			times = append(times, time.Since(t0))
			statuses[st]++
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(times)
	var total time.Duration
	for _, d := range times {
		total += d
	}
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms/check")
	b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "worst-ms/check")
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
