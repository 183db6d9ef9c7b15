package replay

import (
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// TestObserve judges replays by hand: each triplet pattern is confirmed
// by the values that break it and not by those a serial order gives, a
// race only by a failure the recorded run did not have, and a witness
// not forced never.
func TestObserve(t *testing.T) {
	tr := &trace.Trace{
		Sites:   []trace.Site{{}, {File: "/p/c.go", Line: 16}, {File: "/p/c.go", Line: 19}},
		Objects: map[trace.ObjID]trace.Object{1: {Kind: trace.ObjVar, Name: "c.n"}},
	}
	// The finding's accesses are events 10 (first, g1), 20
	// (interleaved, g2) and 30 (last, g1), each a step of the witness.
	finding := func(kind predict.FindingKind, pattern string) predict.Finding {
		ops := map[byte]trace.Kind{'R': trace.KindRead, 'W': trace.KindWrite}
		f := predict.Finding{Kind: kind, Pattern: pattern, Var: "c.n"}
		roles := []string{"first", "interleaved", "last"}
		gs := []trace.GoID{1, 2, 1}
		for i := 0; i < len(pattern); i += 2 {
			k := i / 2
			f.Accesses = append(f.Accesses, predict.Access{Seq: uint64(10 * (k + 1)), G: gs[k], Op: ops[pattern[i]], Obj: 1, Site: trace.SiteID(1 + k%2), Role: roles[k]})
		}
		return f
	}
	w := &Witness{Steps: []Step{{Seq: 10}, {Seq: 20}, {Seq: 30}}}
	result := func(pattern string, vals ...string) Result {
		r := Result{Enforced: true, Complete: true}
		for i, v := range vals {
			r.Values = append(r.Values, Value{Step: i, Expr: "c.n", Write: pattern[2*i] == 'W', Value: v})
		}
		return r
	}
	for _, tc := range []struct {
		name    string
		f       predict.Finding
		r       Result
		failed  bool // the recorded run failed
		confirm bool
		text    string
	}{
		{"lost update", finding(predict.KindAtomicity, "R-W-W"), result("R-W-W", "0", "1", "1"), false, true,
			"g1 read c.n = 0, g2 then wrote c.n = 1, and g1 wrote c.n = 1 over it: g2's update is lost"},
		{"no update lost", finding(predict.KindAtomicity, "R-W-W"), result("R-W-W", "1", "1", "2"), false, false,
			"the witness ran to its last access, but g2 wrote the value g1 had read (c.n = 1): no update is lost"},
		{"reads disagree", finding(predict.KindAtomicity, "R-W-R"), result("R-W-R", "0", "5", "5"), false, true,
			"g1 read c.n = 0, g2 then wrote c.n = 5, and g1 read c.n = 5: its two reads disagree"},
		{"reads agree", finding(predict.KindAtomicity, "R-W-R"), result("R-W-R", "5", "5", "5"), false, false,
			"the witness ran to its last access, but g1 read c.n = 5 both times"},
		{"read another's write", finding(predict.KindAtomicity, "W-W-R"), result("W-W-R", "1", "2", "2"), false, true,
			"g1 wrote c.n = 1, g2 then wrote c.n = 2, and g1 read c.n = 2, not what it wrote"},
		{"intermediate value", finding(predict.KindAtomicity, "W-R-W"), result("W-R-W", "1", "1", "2"), false, true,
			"g1 wrote c.n = 1, g2 then read c.n = 1, and g1 wrote c.n = 2: g2 saw an intermediate value"},
		{"not intermediate", finding(predict.KindAtomicity, "W-R-W"), result("W-R-W", "1", "1", "1"), false, false,
			"the witness ran to its last access, but g2 read c.n = 1, which is not an intermediate value (g1 wrote 1, then 1)"},
		{"W-W-W", finding(predict.KindAtomicity, "W-W-W"), result("W-W-W", "1", "2", "3"), false, false,
			"the witness ran to its last access, but the values of c.n cannot show a W-W-W: the last write is g1's in a serial order too"},
		{"value not read", finding(predict.KindAtomicity, "R-W-W"), result("R-W-W", "0", "1"), false, false,
			"the witness ran to its last access, but the replay could not read the value of c.n at c.go:16 (only integers, booleans, pointers, slices and strings are read)"},
		{"race", finding(predict.KindRace, "W-R"), result("W-R", "1", "1"), false, false,
			"the witness ran to its last access, but the values of c.n cannot show a race W-R: they are those of some serial order"},
		{"race, test failed", finding(predict.KindRace, "W-R"), func() Result {
			r := result("W-R", "1", "1")
			r.Status = 1
			r.Output = "=== RUN   TestX\n--- FAIL: TestX (0.00s)\n    c_test.go:20: count 1, want 2\nFAIL\n"
			return r
		}(), false, true, "the witness ran to its last access, and the test failed: c_test.go:20: count 1, want 2"},
		{"race, recorded run failed too", finding(predict.KindRace, "W-R"), func() Result {
			r := result("W-R", "1", "1")
			r.Status = 2
			return r
		}(), true, false, "the witness ran to its last access, but the values of c.n cannot show a race W-R: they are those of some serial order"},
		{"race, met", finding(predict.KindRace, "W-R"), Result{Enforced: true, Complete: true, Meeting: &Meeting{Addr: 0xc000012000, Value: "1"}}, false, true,
			"g1 and g2 stood at once at their accesses of one c.n, neither waiting for the other: g1 about to write it at c.go:16, g2 about to read it at c.go:19, where c.n held 1"},
		{"race, met, value not read, test failed", finding(predict.KindRace, "R-W"), Result{Enforced: true, Complete: true, Status: 1, Meeting: &Meeting{Addr: 0xc000012000}}, false, true,
			"g1 and g2 stood at once at their accesses of one c.n, neither waiting for the other: g1 about to read it at c.go:16, g2 about to write it at c.go:19; the program exited with status 1"},
		{"not forced", finding(predict.KindAtomicity, "R-W-W"), Result{Reason: "the replay ran past its time limit before step 1"}, false, false,
			"the replay ran past its time limit before step 1"},
	} {
		o := Observe(tr, tc.f, w, tc.r, tc.failed)
		if o.Confirmed != tc.confirm || o.Text != tc.text {
			t.Errorf("%s: confirmed %v, %q\nwant %v, %q", tc.name, o.Confirmed, o.Text, tc.confirm, tc.text)
		}
	}
}

// An atomic-set finding is shown by values that neither serial order of
// its two regions gives, on the values known: a read of a variable that
// the witness writes first has no known earlier value.
func TestObserveAtomicSet(t *testing.T) {
	tr := &trace.Trace{
		Sites:   []trace.Site{{}, {File: "/p/l.go", Line: 10}},
		Objects: map[trace.ObjID]trace.Object{1: {Kind: trace.ObjVar, Name: "le.leaseMap[1]"}, 2: {Kind: trace.ObjVar, Name: "le.expiries[1]"}},
	}
	// pattern is four accesses such as "Rx Wx' Wy' Wy": the region's
	// (g1) first and last, the other goroutine's (g2) two between.
	finding := func(pattern string) predict.Finding {
		f := predict.Finding{Kind: predict.KindAtomicSet, Pattern: pattern}
		for i, a := range strings.Fields(pattern) {
			op, obj, g := trace.KindRead, trace.ObjID(1), trace.GoID(1)
			if a[0] == 'W' {
				op = trace.KindWrite
			}
			if a[1] == 'y' {
				obj = 2
			}
			if strings.HasSuffix(a, "'") {
				g = 2
			}
			f.Accesses = append(f.Accesses, predict.Access{Seq: uint64(10 * (i + 1)), G: g, Op: op, Obj: obj, Site: 1})
		}
		return f
	}
	w := &Witness{Steps: []Step{{Seq: 10}, {Seq: 20}, {Seq: 30}, {Seq: 40}}}
	result := func(vals ...string) Result {
		r := Result{Enforced: true, Complete: true}
		for i, v := range vals {
			r.Values = append(r.Values, Value{Step: i, Value: v})
		}
		return r
	}
	for _, tc := range []struct {
		pattern string
		r       Result
		confirm bool
		text    string
	}{
		{"Rx Wx' Wy' Wy", result("0", "1", "5", "7"), true,
			"g1 read le.leaseMap[1] = 0, then g2 wrote le.leaseMap[1] = 1, then g2 wrote le.expiries[1] = 5, then g1 wrote le.expiries[1] = 7: neither g1's region run before g2's nor after it gives these values"},
		{"Rx Wx' Wy' Wy", result("0", "1", "5", "5"), false,
			"the witness ran to its last access, but its values are those of g1's region run before g2's"},
		{"Rx Wx' Wy' Wy", result("1", "1", "5", "7"), false,
			"the witness ran to its last access, but its values are those of g1's region run after g2's"},
		// y's value before the other's write is not known.
		{"Rx Wx' Wy' Ry", result("0", "1", "5", "5"), false,
			"the witness ran to its last access, but its values are those of g1's region run before g2's"},
		{"Rx Ry' Wx' Wy", result("2", "nil", "1", "0xc000010000"), true,
			"g1 read le.leaseMap[1] = 2, then g2 read le.expiries[1] = nil, then g2 wrote le.leaseMap[1] = 1, then g1 wrote le.expiries[1] = 0xc000010000: neither g1's region run before g2's nor after it gives these values"},
	} {
		o := Observe(tr, finding(tc.pattern), w, tc.r, false)
		if o.Confirmed != tc.confirm || o.Text != tc.text {
			t.Errorf("%s: confirmed %v, %q\nwant %v, %q", tc.pattern, o.Confirmed, o.Text, tc.confirm, tc.text)
		}
	}
}
