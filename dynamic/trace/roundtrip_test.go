package trace_test

import (
	"bytes"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

func text(t *testing.T, tr *trace.Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := trace.WriteTrace(trace.NewTextWriter(&b), tr); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func stdOf(t *testing.T, tr *trace.Trace) (string, string) {
	t.Helper()
	var s, tb bytes.Buffer
	if err := trace.WriteTrace(trace.NewSTDWriter(&s, &tb), tr); err != nil {
		t.Fatal(err)
	}
	return s.String(), tb.String()
}

func importSTD(t *testing.T, std, table string) *trace.Trace {
	t.Helper()
	r := trace.NewSTDReader(bytes.NewReader([]byte(std)), "g.std")
	if err := r.ReadTable(bytes.NewReader([]byte(table)), "g.std.sites"); err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestRoundTrips sends generated traces text -> binary -> text and
// through STD, and checks that every trace read back is still valid.
func TestRoundTrips(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		cfg := tracegen.Config{Seed: seed, Events: 300, Goroutines: 1 + int(seed%5), Locks: 3, RWLocks: 1, Chans: 2, SyncProb: 0.2}
		tr := tracegen.Trace(cfg)
		want := text(t, tr)

		var bin bytes.Buffer
		if err := trace.WriteTrace(trace.NewBinaryWriter(&bin), tr); err != nil {
			t.Fatal(err)
		}
		fromBin, err := trace.ReadAll(trace.NewBinaryReader(&bin, "g.avt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, fromBin); got != want {
			t.Fatalf("seed %d: binary round trip differs", seed)
		}
		fromText, err := trace.ReadAll(trace.NewTextReader(bytes.NewReader([]byte(want)), "g.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, fromText); got != want {
			t.Fatalf("seed %d: text round trip differs", seed)
		}

		// STD: export, import, export again. The first import turns the
		// Go-only operations into locks (docs/trace-formats.md), after
		// which export and import are inverse.
		s1, tb1 := stdOf(t, tr)
		back := importSTD(t, s1, tb1)
		if err := trace.Validate(back); err != nil {
			t.Fatalf("seed %d: imported trace is invalid: %v\n%s", seed, err, s1)
		}
		s2, tb2 := stdOf(t, back)
		back2 := importSTD(t, s2, tb2)
		s3, tb3 := stdOf(t, back2)
		if s2 != s3 || tb2 != tb3 {
			t.Fatalf("seed %d: STD export and import are not inverse", seed)
		}
		if text(t, back) != text(t, back2) {
			t.Fatalf("seed %d: STD import of an export differs", seed)
		}
	}
}

// TestSTDKeepsLocks checks that a trace of accesses, locks, forks and
// regions keeps its goroutines, objects, sites and regions through STD.
func TestSTDKeepsLocks(t *testing.T) {
	src := `avtrace 1
site 1 a.go:1:1 f
obj 0x8 var x
obj 0x10 mutex mu
g1 fork g2 @1
g2 begin @1 region=1.1
g2 acq 0x10 @1 region=1.1
g2 rd 0x8 @1 region=1.1
g2 wr 0x8 @1 region=1.1
g2 rel 0x10 @1 region=1.1
g2 finish @1 region=1.1
g1 acq 0x10
g1 wr 0x8
g1 rel 0x10
`
	tr, err := trace.ReadAll(trace.NewTextReader(bytes.NewReader([]byte(src)), "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s, tb := stdOf(t, tr)
	if got := text(t, importSTD(t, s, tb)); got != src {
		t.Errorf("through STD:\n%s\nwant:\n%s", got, src)
	}
}
