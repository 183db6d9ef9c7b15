package replay

import (
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// TestSiteExpr checks which expression a step's access is checked
// through: its object's name where that names this site's expression
// (or a field of it), the site's own expression where the object was
// named at another (one goroutine's b.accts[to] is another's
// b.accts[from]), and none for a field named after another expression.
func TestSiteExpr(t *testing.T) {
	tr := &trace.Trace{
		Sites: []trace.Site{{}, {File: "bank.go", Line: 64, Col: 2}, {File: "bank.go", Line: 63, Col: 2}},
		Objects: map[trace.ObjID]trace.Object{
			0x10: {Kind: trace.ObjVar, Name: "b.accts[to]"},
			0x20: {Kind: trace.ObjVar, Name: "b.accts[to].n"},
		},
		Events: []trace.Event{
			{G: 1, Kind: trace.KindRead, Obj: 0x10, Site: 1},
			{G: 1, Kind: trace.KindRead, Obj: 0x20, Site: 1},
			{G: 2, Kind: trace.KindRead, Obj: 0x10, Site: 2},
			{G: 2, Kind: trace.KindRead, Obj: 0x20, Site: 2},
		},
	}
	exprs := map[int][]string{64: {"b.accts", "b.accts[to]"}, 63: {"b.accts", "b.accts[from]"}}
	exprsAt := func(s trace.Site) []string { return exprs[s.Line] }
	for i, want := range []string{"b.accts[to]", "b.accts[to].n", "b.accts[from]", ""} {
		e := tr.Events[i]
		name := tr.Object(e.Obj).Name
		if got := siteExpr(name, tr.Site(e.Site), exprsAt); got != want {
			t.Errorf("event %d: %q, want %q", i, got, want)
		}
		if got := siteExpr(name, tr.Site(e.Site), nil); got != name {
			t.Errorf("event %d without the plan: %q, want the object's name %q", i, got, name)
		}
	}
	// Two expressions of the name's form at one site: not checked.
	two := func(trace.Site) []string { return []string{"m[a]", "m[b]"} }
	if got := siteExpr("m[c]", trace.Site{}, two); got != "" {
		t.Errorf("two candidates: %q, want none", got)
	}
}
