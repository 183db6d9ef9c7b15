package predict

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

func TestObservedHandWritten(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		closing int // index of the event at which the cycle is found, -1 for none
	}{
		{"lost update", `
			1 fork 2
			1 begin r
			1 rd x
			2 begin r
			2 rd x
			2 wr x
			2 finish r
			1 wr x
			1 finish r`, 7},
		{"serial", `
			1 fork 2
			1 begin r
			1 rd x
			1 wr x
			1 finish r
			2 begin r
			2 rd x
			2 wr x
			2 finish r`, -1},
		{"unary interleaving write", `
			1 fork 2
			1 begin r
			1 rd x
			2 wr x
			1 rd x
			1 finish r`, 4},
		{"reads commute", `
			1 fork 2
			1 begin r
			1 rd x
			2 rd x
			1 rd x
			1 finish r`, -1},
		{"lock order makes a cycle", `
			1 fork 2
			1 begin r
			1 acq m
			1 rel m
			2 acq m
			2 rel m
			1 acq m
			1 rel m
			1 finish r`, 6},
		{"cycle through a third transaction, found at the end", `
			# 1's region publishes P (x), 2's region publishes Q (y) before
			# learning x; then 1 reads y: 1 -> 2 and 2 -> 1.
			1 fork 2
			2 begin r
			2 wr y
			1 begin r
			1 wr x
			2 rd x
			1 rd y
			1 finish r
			2 finish r`, 6},
		{"own publications are not cycles", `
			1 begin r
			1 astore a
			1 aload a
			1 acq m
			1 rel m
			1 acq m
			1 rel m
			1 finish r`, -1},
		{"unbuffered rendezvous inside a region", `
			chan c 0
			1 fork 2
			1 begin r
			1 send c 1
			2 recv c 1
			1 rd x
			1 finish r`, 3},
		{"regions given by the events' region fields", `
			1 fork 2
			1 rd x in=r.1
			2 wr x
			1 rd x in=r.1`, 3},
		{"a new instance is a new transaction", `
			1 fork 2
			1 rd x in=r.1
			2 wr x
			1 rd x in=r.2`, -1},
		{"buffered send inside a region", `
			chan c 1
			1 fork 2
			1 begin r
			1 send c 1
			2 recv c 1
			1 rd x
			1 finish r`, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := tt(t, tc.src)
			ref := SerializableByGraph(tr)
			if ref != tc.closing {
				t.Errorf("graph: first cycle at %d, want %d", ref, tc.closing)
			}
			f := CheckObservedTrace(tr)
			switch {
			case f == nil && tc.closing >= 0:
				t.Errorf("observed: serializable, want a cycle")
			case f != nil && tc.closing < 0:
				t.Errorf("observed: %+v, want serializable", *f)
			case f != nil && f.Kind != KindUnserializable:
				t.Errorf("observed: kind %v", f.Kind)
			}
		})
	}
}

func TestObservedDifferential(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	cfgs := []genConfig{
		{goroutines: 2, vars: 1, locks: 2, items: 4},
		{goroutines: 3, vars: 2, locks: 3, chans: 2, wgs: true, items: 3, atomics: 2, anywhere: true},
		{goroutines: 3, vars: 2, locks: 2, chans: 3, items: 4, anywhere: true},
		// More goroutines than transactions open at once: slots are
		// reused, and clocks of ended transactions forgotten.
		{goroutines: 6, vars: 2, locks: 2, items: 3},
		{goroutines: 5, vars: 2, locks: 3, chans: 3, wgs: true, items: 3, atomics: 2, anywhere: true},
	}
	for ci, cfg := range cfgs {
		rng := rand.New(rand.NewPCG(uint64(ci+10), 2))
		checked, cyclic, bad := 0, 0, 0
		for checked < n {
			tr := randomTrace(rng, cfg)
			if tr == nil {
				continue
			}
			checked++
			ref := SerializableByGraph(tr)
			// found is the index of the event after which Observed
			// first reports a cycle (len(tr.Events) at the end). A cycle
			// found as a transaction ends names that transaction's
			// last event as its closing access, which can come before
			// the event that closed the cycle; the time of the report
			// is what must not.
			o := NewObserved(ObservedOptions{Object: tr.Object})
			found := -1
			for i := range tr.Events {
				o.Step(&tr.Events[i])
				if found < 0 && o.Found() {
					found = i
				}
			}
			f := o.Finish()
			if found < 0 && f != nil {
				found = len(tr.Events)
			}
			if ref >= 0 {
				cyclic++
			}
			ok := (ref >= 0) == (f != nil)
			if ok && f != nil && found < ref {
				ok = false // found before the prefix had a cycle
			}
			if !ok {
				bad++
				if bad <= 3 {
					t.Errorf("config %d: graph says %d, observed says %+v\n%s", ci, ref, f, formatTrace(tr))
				}
			}
		}
		t.Logf("config %d: %d traces, %d not serializable, %d disagreements", ci, checked, cyclic, bad)
	}
}

func TestObservedFinding(t *testing.T) {
	tr := tt(t, `
		1 fork 2
		1 begin r
		1 rd x @1
		2 wr x @2
		1 rd x @3
		1 finish r`)
	f := CheckObservedTrace(tr)
	if f == nil {
		t.Fatal("no finding")
	}
	x := tr.Events[2].Obj
	want := Finding{Kind: KindUnserializable, Pattern: "cycle", Level: LevelPredicted, Var: "x", Count: 1,
		Accesses: []Access{
			{Seq: 1, G: 1, Op: trace.KindRegionBegin, Site: 3, Role: "transaction"},
			{Seq: 3, G: 2, Op: trace.KindWrite, Obj: x, Site: 2, Role: "source"},
			{Seq: 4, G: 1, Op: trace.KindRead, Obj: x, Site: 3, Role: "closing"},
		}}
	if fmt.Sprint(*f) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", *f, want)
	}
}
