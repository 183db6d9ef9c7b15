package report

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// testIndex tells which top-level test each goroutine of a recorded test
// run belongs to, so that a finding names the tests to run again (go
// test -run, avcheck run -run).
//
// A goroutine belongs to the first test function (or a function literal
// in one) that one of its events' sites is in: the test's own goroutine
// passes the test's first line, or its code; a goroutine the test starts
// runs its literal. Else it belongs to the test of the goroutine that
// forked it, as a goroutine that a package's code starts on a test's
// behalf does. A goroutine of neither (package initialisation, code not
// recorded) belongs to none.
type testIndex struct {
	own    map[trace.GoID]string
	parent map[trace.GoID]trace.GoID
	memo   map[trace.GoID]string
}

// newTestIndex indexes, in t, the tests of the goroutines of fs's
// accesses. It passes over the trace twice, but looks up a goroutine only
// at a fork and where the trace goes from one goroutine to another, and
// a site's function once: on a trace of millions of events a lookup per
// event kept an interrupted run from ending within its second.
func newTestIndex(t *trace.Trace, fs []predict.Finding) *testIndex {
	x := &testIndex{own: map[trace.GoID]string{}, parent: map[trace.GoID]trace.GoID{}, memo: map[trace.GoID]string{}}
	want := map[trace.GoID]bool{}
	for i := range fs {
		for _, a := range fs[i].Accesses {
			want[a.G] = true
		}
	}
	if len(want) == 0 {
		return x
	}
	for i := range t.Events {
		if e := &t.Events[i]; e.Kind == trace.KindFork {
			x.parent[trace.GoID(e.Arg)] = e.G
		}
	}
	// The goroutines whose own test may be asked for: those of the
	// accesses and the goroutines that forked them, up to the root.
	for g := range want {
		for p, ok := x.parent[g]; ok && !want[p]; p, ok = x.parent[p] {
			want[p] = true
		}
	}
	// Per site, the test its function is, once known ("" for none).
	names, known := make([]string, len(t.Sites)), make([]bool, len(t.Sites))
	lastG, look := trace.GoID(0), false
	for i := range t.Events {
		e := &t.Events[i]
		if i == 0 || e.G != lastG {
			lastG = e.G
			_, found := x.own[e.G]
			look = want[e.G] && !found
		}
		if !look || int(e.Site) >= len(names) {
			continue
		}
		if !known[e.Site] {
			names[e.Site], known[e.Site] = testFunc(t.Site(e.Site).Func), true
		}
		if name := names[e.Site]; name != "" {
			x.own[e.G] = name
			look = false
		}
	}
	return x
}

// of returns the test goroutine g belongs to, "" for none.
func (x *testIndex) of(g trace.GoID) string {
	if name, ok := x.memo[g]; ok {
		return name
	}
	name, ok := x.own[g]
	if !ok {
		if p, forked := x.parent[g]; forked && p != g {
			x.memo[g] = "" // a fork cycle, in a trace not validated, ends here
			name = x.of(p)
		}
	}
	x.memo[g] = name
	return name
}

// tests returns the tests, sorted, of the goroutines of f's accesses.
func (x *testIndex) tests(gs []trace.GoID) []string {
	var names []string
	for _, g := range gs {
		if name := x.of(g); name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// testFunc returns the top-level test, benchmark, example or fuzz test
// that a site's function is, or is a function literal of: "TestGet" for
// "example.com/cache.TestGet", "example.com/cache_test.TestGet.func1.2"
// and "example.com/cache.TestGet$1";
// "" for any other function.
func testFunc(fn string) string {
	if strings.HasPrefix(fn, "(") {
		return "" // a method
	}
	fn = fn[strings.LastIndex(fn, "/")+1:]
	_, name, ok := strings.Cut(fn, ".")
	if !ok {
		return ""
	}
	// A literal's name follows the test's: TestGet.func1 as the
	// runtime names it, TestGet$1 as the probe plan (SSA) does.
	if i := strings.IndexAny(name, ".$"); i >= 0 {
		name = name[:i]
	}
	for _, prefix := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		// As go test tells them: TestX, Test_x and Test, not Testx.
		if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !unicode.IsLower(r) {
			return name
		}
	}
	return ""
}
