package predict

import (
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// asAccess is one access of the derivation: unit 0 (u) or 1 (u'),
// variable 0 (x) or 1 (y), read or write.
type asAccess struct {
	unit, v int
	write   bool
}

func asConflict(a, b asAccess) bool {
	return a.unit != b.unit && a.v == b.v && (a.write || b.write)
}

// asUnserializable reports whether a schedule of two units is not conflict
// serializable: its conflicts order u before u' and u' before u.
func asUnserializable(s []asAccess) bool {
	fwd, back := false, false
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if asConflict(s[i], s[j]) {
				if s[i].unit == 0 {
					fwd = true
				} else {
					back = true
				}
			}
		}
	}
	return fwd && back
}

// asHasTriplet reports whether a schedule contains a single-variable
// violation: two accesses of one unit to a variable with an access of the
// other unit between them that conflicts with both.
func asHasTriplet(s []asAccess) bool {
	for i := range s {
		for k := i + 2; k < len(s); k++ {
			for j := i + 1; j < k; j++ {
				if s[i].unit == s[k].unit && s[i].v == s[k].v && asConflict(s[i], s[j]) && asConflict(s[j], s[k]) {
					return true
				}
			}
		}
	}
	return false
}

// asName writes a schedule canonically: the unit of the first access is u,
// the variable of the first access is x.
func asName(s []asAccess) string {
	var parts []string
	for _, a := range s {
		u := "u"
		if a.unit != s[0].unit {
			u = "u'"
		}
		x := "x"
		if a.v != s[0].v {
			x = "y"
		}
		parts = append(parts, opLetter(a.write)+u+"("+x+")")
	}
	return strings.Join(parts, "-")
}

// deriveAtomicSetPatterns enumerates every schedule of two units with the
// given numbers of accesses over nvars variables and returns the
// canonical names of the unserializable ones that contain no triplet
// (when noTriplet is set).
func deriveAtomicSetPatterns(nu, nv, nvars int, noTriplet bool) []string {
	n := nu + nv
	seen := map[string]bool{}
	var out []string
	for ops := 0; ops < 1<<n; ops++ {
		for vars := 0; vars < pow(nvars, n); vars++ {
			var acc []asAccess
			vv := vars
			for i := 0; i < n; i++ {
				unit := 0
				if i >= nu {
					unit = 1
				}
				acc = append(acc, asAccess{unit: unit, v: vv % nvars, write: ops>>i&1 == 1})
				vv /= nvars
			}
			// Every interleaving that keeps each unit's order.
			for mask := 0; mask < 1<<n; mask++ {
				if popcount(mask) != nu {
					continue
				}
				var s []asAccess
				iu, iv := 0, nu
				for p := 0; p < n; p++ {
					if mask>>p&1 == 1 {
						s = append(s, acc[iu])
						iu++
					} else {
						s = append(s, acc[iv])
						iv++
					}
				}
				if !asUnserializable(s) || noTriplet && asHasTriplet(s) {
					continue
				}
				if name := asName(s); !seen[name] {
					seen[name] = true
					out = append(out, name)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func pow(a, b int) int {
	r := 1
	for range b {
		r *= a
	}
	return r
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// The problematic patterns of Vaziri, Tip and Dolby (POPL 2006), as PECAN
// cites them (section 3, footnote 3): five on one location, six on two.
var vaziriSingle = []string{"R-W-R", "W-W-R", "W-R-W", "R-W-W", "W-W-W"}

var vaziriTwo = []string{
	"Wu(x)-Wu'(x)-Wu'(y)-Wu(y)", "Wu(x)-Wu'(y)-Wu'(x)-Wu(y)",
	"Wu(x)-Ru'(x)-Ru'(y)-Wu(y)", "Wu(x)-Ru'(y)-Ru'(x)-Wu(y)",
	"Ru(x)-Wu'(x)-Wu'(y)-Ru(y)", "Ru(x)-Wu'(y)-Wu'(x)-Ru(y)",
}

// nested reports whether a two-variable pattern has u”s accesses inside
// u's (u u' u' u) rather than crossed (u u' u u').
func nested(p string) bool {
	parts := strings.Split(p, "-")
	return !strings.Contains(parts[0], "u'") && strings.Contains(parts[1], "u'") &&
		strings.Contains(parts[2], "u'") && !strings.Contains(parts[3], "u'")
}

// uniform reports whether each unit's two accesses in a pattern are of one
// kind (both reads or both writes).
func uniform(p string) bool {
	parts := strings.Split(p, "-")
	return parts[0][0] == parts[3][0] && parts[1][0] == parts[2][0]
}

func TestDeriveAtomicSetPatterns(t *testing.T) {
	// One variable, u with two accesses and u' with one between them:
	// the five unserializable triplets.
	var single []string
	for _, p := range deriveAtomicSetPatterns(2, 1, 1, false) {
		parts := strings.Split(p, "-")
		if strings.Contains(parts[1], "u'") {
			single = append(single, string(parts[0][0])+"-"+string(parts[1][0])+"-"+string(parts[2][0]))
		}
	}
	slices.Sort(single)
	if want := slices.Sorted(slices.Values(vaziriSingle)); !slices.Equal(single, want) {
		t.Errorf("single-variable patterns: got %v, want %v", single, want)
	}

	// Two variables, two accesses per unit, no triplet inside.
	two := deriveAtomicSetPatterns(2, 2, 2, true)
	var nest, cross, uni []string
	for _, p := range two {
		if !strings.Contains(p, "(y)") {
			continue
		}
		if nested(p) {
			nest = append(nest, p)
			if uniform(p) {
				uni = append(uni, p)
			}
		} else {
			cross = append(cross, p)
		}
	}
	t.Logf("derived two-variable patterns: %d nested, %d crossed", len(nest), len(cross))
	for _, p := range nest {
		t.Logf("  nested  %s", p)
	}
	for _, p := range cross {
		t.Logf("  crossed %s", p)
	}
	if len(nest) != 18 || len(cross) != 9 {
		t.Errorf("got %d nested and %d crossed two-variable patterns, want 18 and 9", len(nest), len(cross))
	}
	// Vaziri et al.'s six are exactly the nested patterns in which each
	// unit's two accesses are of one kind; with the five triplets they
	// make the eleven.
	if want := slices.Sorted(slices.Values(vaziriTwo)); !slices.Equal(uni, want) {
		t.Errorf("uniform nested patterns: got %v, want Vaziri et al.'s %v", uni, want)
	}
	if n := len(single) + len(uni); n != 11 {
		t.Errorf("got %d problematic patterns, want eleven", n)
	}
}

// TestAtomicSetSearchCoversDerived builds, for every derived nested
// pattern, a trace that runs the two units one after the other with each
// access in its own critical section, and checks that Predict reports the
// pattern.
func TestAtomicSetSearchCoversDerived(t *testing.T) {
	for _, p := range deriveAtomicSetPatterns(2, 2, 2, true) {
		if !strings.Contains(p, "(y)") || !nested(p) {
			continue
		}
		parts := strings.Split(p, "-")
		tr := &trace.Trace{Sites: []trace.Site{{}}, Objects: map[trace.ObjID]trace.Object{
			0x10: {Kind: trace.ObjVar, Name: "x"}, 0x11: {Kind: trace.ObjVar, Name: "y"},
			0x20: {Kind: trace.ObjMutex, Name: "m"},
		}}
		add := func(g trace.GoID, k trace.Kind, obj trace.ObjID, region trace.RegionID) {
			e := trace.Event{Seq: uint64(len(tr.Events)), G: g, Kind: k, Obj: obj, Region: region, Inst: 1}
			if k.IsAccess() {
				e.Site = trace.SiteID(len(tr.Sites))
				tr.Sites = append(tr.Sites, trace.Site{File: "as.go", Line: len(tr.Sites)})
			}
			tr.Events = append(tr.Events, e)
		}
		add(1, trace.KindFork, 0, 0)
		tr.Events[0].Arg = 2
		// u's accesses are parts 0 and 3, u''s parts 1 and 2; u runs first.
		for _, unit := range [][]int{{0, 3}, {1, 2}} {
			g := trace.GoID(1 + min(unit[0], 1))
			for _, i := range unit {
				k := trace.KindRead
				if parts[i][0] == 'W' {
					k = trace.KindWrite
				}
				obj := trace.ObjID(0x10)
				if strings.Contains(parts[i], "(y)") {
					obj = 0x11
				}
				add(g, trace.KindAcquire, 0x20, trace.RegionID(g))
				add(g, k, obj, trace.RegionID(g))
				add(g, trace.KindRelease, 0x20, trace.RegionID(g))
			}
		}
		res := Predict(tr, Options{})
		var got []string
		for _, f := range res.Reported() {
			if f.Kind == KindAtomicSet {
				got = append(got, f.Pattern)
			}
		}
		if !slices.Contains(got, p) {
			t.Errorf("pattern %s: atomic-set findings %v", p, got)
			for _, e := range tr.Events {
				t.Log(e.String())
			}
		}
	}
}
