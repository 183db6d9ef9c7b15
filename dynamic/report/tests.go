package report

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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
	t      *trace.Trace
	own    map[trace.GoID]string
	parent map[trace.GoID]trace.GoID
	memo   map[trace.GoID]string
}

func newTestIndex(t *trace.Trace) *testIndex {
	x := &testIndex{t: t, own: map[trace.GoID]string{}, parent: map[trace.GoID]trace.GoID{}, memo: map[trace.GoID]string{}}
	names := map[trace.SiteID]string{}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind == trace.KindFork {
			x.parent[trace.GoID(e.Arg)] = e.G
		}
		if _, ok := x.own[e.G]; ok || e.Site == 0 {
			continue
		}
		name, ok := names[e.Site]
		if !ok {
			name = testFunc(t.Site(e.Site).Func)
			names[e.Site] = name
		}
		if name != "" {
			x.own[e.G] = name
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
// "example.com/cache.TestGet" and "example.com/cache_test.TestGet.func1.2";
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
	name, _, _ = strings.Cut(name, ".")
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
