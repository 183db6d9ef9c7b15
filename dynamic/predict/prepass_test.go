package predict

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// TestPrepass checks that the index a Prepass builds from runs of events
// is the one buildIndex builds from the whole trace, and that prediction
// from it finds the same: with runs of several lengths, with the runs cut
// from an array of the trace's length (so that the Prepass sizes its
// arrays from it, as when ReadAllFunc reads a file) and from arrays of
// their own length, and on a trace long enough that the sizing starts.
func TestPrepass(t *testing.T) {
	for _, tc := range []struct {
		cfg  tracegen.Config
		runs []int // run lengths, repeated
		own  bool  // each run in an array of its own length
	}{
		{tracegen.Config{Seed: 1, Events: 3000, Goroutines: 4, Locks: 4, RWLocks: 1, Vars: 8, MaxNesting: 2, Chans: 2, Regions: 4}, []int{1, 7, 4096}, false},
		{tracegen.Config{Seed: 2, Events: 5000, Goroutines: 3, Locks: 3, Vars: 6, MaxNesting: 3, Regions: 3}, []int{100}, true},
		{tracegen.Config{Seed: 3, Events: 3 * reserveAfter, Goroutines: 8, Locks: 16, RWLocks: 4, Vars: 64, MaxNesting: 3, Chans: 4, Regions: 16}, []int{4096, 333}, false},
	} {
		tr := tracegen.Trace(tc.cfg)
		p := NewPrepass(tr.Object)
		for i, k := 0, 0; i < len(tr.Events); k++ {
			n := min(tc.runs[k%len(tc.runs)], len(tr.Events)-i)
			run := tr.Events[i : i+n]
			if tc.own {
				run = append([]trace.Event(nil), run...)
			}
			p.Add(run)
			i += n
		}
		got, want := p.finish(tr), buildIndex(tr)
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"acc", got.acc, want.acc}, {"vars", got.vars, want.vars}, {"byVar", got.byVar, want.byVar},
			{"snaps", got.snaps, want.snaps}, {"clocks", got.clocks.chunks, want.clocks.chunks},
			{"glog", got.glog, want.glog}, {"keys", got.keys, want.keys}, {"gids", got.gids, want.gids},
			{"numInst", got.numInst, want.numInst}, {"lock states", got.locks.States(), want.locks.States()},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("seed %d: the Prepass's %s differ from buildIndex's", tc.cfg.Seed, f.name)
			}
		}
		if len(got.acc) == 0 || got.numInst == 0 {
			t.Fatalf("seed %d: %d accesses, %d region instances: the trace does not exercise the index", tc.cfg.Seed, len(got.acc), got.numInst)
		}

		// Prediction from a Prepass, from a Prepass that saw only part
		// of the trace (it starts over), and from none.
		opts := Options{}
		wantRes := Predict(tr, opts)
		whole := NewPrepass(tr.Object)
		whole.Add(tr.Events)
		part := NewPrepass(tr.Object)
		part.Add(tr.Events[:len(tr.Events)/2])
		for name, p := range map[string]*Prepass{"whole": whole, "part": part} {
			res := PredictIndexed(tr, p, opts)
			if !reflect.DeepEqual(res, wantRes) {
				t.Errorf("seed %d: PredictIndexed with the %s trace: %d findings, Predict %d", tc.cfg.Seed, name, len(res.Findings), len(wantRes.Findings))
			}
		}
		if len(wantRes.Findings) == 0 {
			t.Errorf("seed %d: no findings: the trace does not exercise prediction", tc.cfg.Seed)
		}
	}
}

// TestPrepassClose checks that a closed Prepass can be closed again, takes
// no more events, and that PredictIndexed then builds its own index.
func TestPrepassClose(t *testing.T) {
	tr := tracegen.Trace(tracegen.Config{Seed: 4, Events: 2000, Goroutines: 3, Locks: 2, Vars: 4, Regions: 2})
	p := NewPrepass(tr.Object)
	p.Add(tr.Events[:1000])
	p.Close()
	p.Close()
	p.Add(tr.Events[1000:])
	opts := Options{}
	if got, want := PredictIndexed(tr, p, opts), Predict(tr, opts); !reflect.DeepEqual(got, want) {
		t.Errorf("PredictIndexed after Close: %d findings, Predict %d", len(got.Findings), len(want.Findings))
	}
}

// TestKeyTabRows checks the access keys (goroutine, site, write) when a
// goroutine's keyTab row is given up at its end and reused by the next:
// the next goroutine's accesses at the same site get keys of their own,
// and the accesses of the goroutines still running keep theirs.
func TestKeyTabRows(t *testing.T) {
	tr := tt(t, `
1 fork 2
1 fork 4
4 rd x @9
2 wr x @5
2 rd x @9
2 end
1 fork 3
3 wr x @5
3 rd x @9
3 end
4 rd x @9
1 wr x @5
`)
	ix := buildIndex(tr)
	var got []string
	for _, a := range ix.acc {
		k := ix.keys[a.key]
		got = append(got, fmt.Sprintf("key %d: g%d site %d write %v", a.key, ix.gids[k.g], k.site, k.write))
	}
	want := []string{
		"key 0: g4 site 9 write false",
		"key 1: g2 site 5 write true",
		"key 2: g2 site 9 write false",
		"key 3: g3 site 5 write true",
		"key 4: g3 site 9 write false",
		"key 0: g4 site 9 write false",
		"key 5: g1 site 5 write true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("keys:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if x := len(ix.keys); x != 6 {
		t.Errorf("%d keys, want 6", x)
	}
}

// A Prepass gives up once the trace's clocks pass the bound that
// ClockBound sets, rather than build them, and the prediction of the
// prefix within the bound, indexed again, is the same as without it.
func TestPrepassClockBound(t *testing.T) {
	var src strings.Builder
	for g := 2; g <= 60; g++ {
		fmt.Fprintf(&src, "1 fork %d\n%d wr x\n", g, g) // none ends
	}
	tr := tt(t, src.String())
	const words = 1000
	n, why := ClockBound(tr, words)
	if why == "" || n >= len(tr.Events) {
		t.Fatalf("ClockBound(%d) = %d, %q: the trace does not pass the bound", words, n, why)
	}
	p := NewPrepass(tr.Object)
	p.SetClockBound(words)
	p.Add(tr.Events)
	if !p.closed || p.x.n != 0 || len(p.x.gs) != 0 {
		t.Fatalf("the Prepass went on past the bound: closed %v, %d events, %d goroutines", p.closed, p.x.n, len(p.x.gs))
	}
	cut := &trace.Trace{Events: tr.Events[:n], Objects: tr.Objects, Sites: tr.Sites}
	got, want := PredictIndexed(cut, p, Options{}), Predict(cut, Options{})
	if !reflect.DeepEqual(got.Findings, want.Findings) || len(want.Findings) == 0 {
		t.Errorf("the prediction of the prefix from a Prepass that gave up: %d findings, want %d (not 0)", len(got.Findings), len(want.Findings))
	}

	// Within the bound, the Prepass indexes the whole trace.
	whole := NewPrepass(tr.Object)
	whole.SetClockBound(int64(len(tr.Events)) * int64(len(tr.Events)))
	whole.Add(tr.Events)
	if whole.closed || whole.x.n != len(tr.Events) {
		t.Errorf("a Prepass within its bound stopped: closed %v, %d of %d events", whole.closed, whole.x.n, len(tr.Events))
	}
	whole.Close()
}
