package predict

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/avcheck/avcheck/dynamic/solve"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// BenchmarkPreciseFixtures runs the precise stage on every candidate of
// the fixtures (testdata/predict) and reports checks per second of the
// stage's own time (encoding and solving, validation included).
func BenchmarkPreciseFixtures(b *testing.B) {
	files, err := filepath.Glob("testdata/predict/*.txtar")
	if err != nil || len(files) == 0 {
		b.Fatalf("no fixtures: %v", err)
	}
	var traces []*trace.Trace
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "trace" {
				tr, err := trace.ReadAll(trace.NewTextReader(bytes.NewReader(f.Data), file))
				if err != nil {
					b.Fatal(err)
				}
				traces = append(traces, tr)
			}
		}
	}
	for _, engine := range benchEngines(b) {
		b.Run(engine, func(b *testing.B) {
			checks, spent := 0, time.Duration(0)
			for b.Loop() {
				for _, tr := range traces {
					res := Predict(tr, Options{All: true, Precise: true, Solver: engine})
					checks += res.Precise.Checks
					spent += res.Precise.Time
				}
			}
			b.ReportMetric(float64(checks)/spent.Seconds(), "checks/s")
		})
	}
}

// BenchmarkPreciseWindow times single checks (encode and solve) over
// windows of 200 and 1000 events of generated traces with values (locks,
// WaitGroups and regions; channels and Cond are left out, since the
// generator pairs sends and receives in ways a run cannot), for every
// instance the pattern search keeps of its atomicity and race candidates,
// and reports the median and the worst.
func BenchmarkPreciseWindow(b *testing.B) {
	type job struct {
		tr       *trace.Trace
		m        *syncMeta
		targets  []uint32
		adjacent bool
	}
	var jobs []job
	for seed := uint64(1); seed <= 4; seed++ {
		tr := tracegen.Trace(tracegen.Config{Seed: seed, Events: 20000, Goroutines: 4, Vars: 6, Locks: 3, SyncProb: -1})
		m := newSyncMeta(tr)
		for _, c := range newSearch(buildIndex(tr)).run() {
			if c.f.Kind != KindAtomicity && c.f.Kind != KindRace {
				continue
			}
			for _, r := range c.reps {
				jobs = append(jobs, job{tr, m, r, c.f.Kind == KindRace})
			}
		}
	}
	if len(jobs) == 0 {
		b.Fatal("no candidates in the generated traces")
	}
	for _, engine := range benchEngines(b) {
		for _, w := range []int{200, 1000} {
			b.Run(engine+"/window="+itoa(uint64(w)), func(b *testing.B) {
				var times []time.Duration
				answers := map[solve.Status]int{}
				for b.Loop() {
					times = times[:0]
					clear(answers)
					for _, j := range jobs {
						ps := newPreciseStage(j.tr, j.m, j.m.newPrefixState(), &Options{Precise: true, Window: w, Solver: engine})
						start := time.Now()
						res := ps.check(j.targets, j.adjacent)
						times = append(times, time.Since(start))
						answers[res.status]++
						if res.err != "" {
							b.Logf("%s", res.err)
						}
					}
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
				b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "worst-ms")
				b.ReportMetric(float64(len(jobs)), "checks")
				b.Logf("%s, window %d: answers %v", engine, w, answers)
			})
		}
	}
}

// benchEngines lists the default engine and the external solvers found on
// PATH.
func benchEngines(b *testing.B) []string {
	engines := []string{"gini"}
	for _, s := range []string{"z3", "cvc5"} {
		if _, err := exec.LookPath(s); err == nil {
			engines = append(engines, s)
		} else {
			b.Logf("%s not on PATH: not measured", s)
		}
	}
	return engines
}
