package predict

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// The fixtures in testdata/predict are txtar archives with a "trace"
// section in the text format and an "expect" section listing every finding
// of Predict with All set, one per line (see fixtureLine), or "no finding".
// Predict runs with the precise stage, as the commands do.
// An optional "observed" section gives observed mode's finding the same
// way (CheckObservedTrace reports at most one), and an optional
// "expect-meta" section the findings with the meta-analysis beside the
// search (-engine=all), where they differ.

// readFixtureTrace parses a text trace held in memory.
func readFixtureTrace(t *testing.T, name string, data []byte) *trace.Trace {
	t.Helper()
	tr, err := trace.ReadAll(trace.NewTextReader(strings.NewReader(string(data)), name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tr
}

// fixtureLine renders a finding as one line of an expect section:
// kind, pattern, variable, the accesses as goroutine@file:line, the level,
// and for a dropped finding which stage dropped it.
func fixtureLine(t *trace.Trace, f *Finding) string {
	var b strings.Builder
	b.WriteString(string(f.Kind) + " " + f.Pattern + " " + strings.ReplaceAll(f.Var, " ", ""))
	for _, a := range f.Accesses {
		pos := "-"
		if s := t.Site(a.Site); s.File != "" {
			pos = filepath.Base(s.File) + ":" + itoa(uint64(s.Line))
		}
		b.WriteString(" g" + itoa(uint64(a.G)) + "@" + pos)
	}
	b.WriteString(" " + f.Level.String())
	switch {
	case f.Dropped == "":
	case strings.HasPrefix(f.Dropped, "infeasible"):
		b.WriteString(" infeasible")
	case strings.Contains(f.Dropped, "AVFilter"):
		b.WriteString(" dropped-by-avfilter")
	case strings.Contains(f.Dropped, "no evidence that it is meant to be atomic"), strings.Contains(f.Dropped, "breaks nothing that evidence shows"):
		b.WriteString(" no-intent")
	case strings.Contains(f.Dropped, "which the violation does not access"):
		b.WriteString(" outside-evidence")
	case strings.Contains(f.Dropped, "its region is one critical section, and no lock"):
		b.WriteString(" outside-section")
	case strings.Contains(f.Dropped, "was started by code that avcheck does not rewrite"):
		b.WriteString(" outside-start")
	case strings.Contains(f.Dropped, "again in a critical section, and its value decides the write there"):
		b.WriteString(" rechecked")
	default:
		b.WriteString(" no-witness")
	}
	return b.String()
}

func itoa(x uint64) string {
	if x == 0 {
		return "0"
	}
	var d [20]byte
	i := len(d)
	for x > 0 {
		i--
		d[i] = byte('0' + x%10)
		x /= 10
	}
	return string(d[i:])
}

func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/predict/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var tr *trace.Trace
			var want, wantObserved, wantMeta []string
			haveObserved, haveMeta := false, false
			for _, f := range ar.Files {
				switch f.Name {
				case "trace":
					tr = readFixtureTrace(t, file, f.Data)
				case "expect":
					want = expectLines(f.Data)
				case "observed":
					haveObserved = true
					wantObserved = expectLines(f.Data)
				case "expect-meta":
					haveMeta = true
					wantMeta = expectLines(f.Data)
				}
			}
			if tr == nil {
				t.Fatal("no trace section")
			}
			check := func(opts Options, want []string) {
				res := Predict(tr, opts)
				var got []string
				for i := range res.Findings {
					f := &res.Findings[i]
					got = append(got, fixtureLine(tr, f))
					if f.Dropped == "" {
						checkWitness(t, tr, f)
					}
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("findings (meta-analysis %v):\n%s\nwant:\n%s", opts.Meta, orNone(got), orNone(want))
				}
			}
			check(Options{All: true, Precise: true}, want)
			if haveMeta {
				// The findings with the meta-analysis beside the
				// search (-engine=all).
				check(Options{All: true, Precise: true, Meta: true}, wantMeta)
			}
			if haveObserved {
				var gotObserved []string
				if f := CheckObservedTrace(tr); f != nil {
					gotObserved = append(gotObserved, fixtureLine(tr, f))
				}
				if strings.Join(gotObserved, "\n") != strings.Join(wantObserved, "\n") {
					t.Errorf("observed mode:\n%s\nwant:\n%s", orNone(gotObserved), orNone(wantObserved))
				}
			}
		})
	}
}

func expectLines(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && l != "no finding" {
			out = append(out, l)
		}
	}
	return out
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "no finding"
	}
	return strings.Join(l, "\n")
}

// checkWitness validates a reported finding's witness again, from its
// Seqs, as a consumer of the finding would.
func checkWitness(t *testing.T, tr *trace.Trace, f *Finding) {
	t.Helper()
	if f.Witness == nil {
		t.Errorf("%s: reported without a witness", fixtureLine(tr, f))
		return
	}
	idx := make(map[uint64]uint32, len(tr.Events))
	for i, e := range tr.Events {
		idx[e.Seq] = uint32(i)
	}
	var sched, targets []uint32
	for _, s := range f.Witness {
		sched = append(sched, idx[s])
	}
	for _, a := range f.Accesses {
		targets = append(targets, idx[a.Seq])
	}
	g := witnessGoal{targets: targets, adjacent: f.Kind == KindRace}
	m := newSyncMeta(tr)
	if err := validateSchedule(m, m.newPrefixState(), idx[f.WitnessFrom], sched, g); err != nil {
		t.Errorf("%s: witness invalid: %v", fixtureLine(tr, f), err)
	}
}
