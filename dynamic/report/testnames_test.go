package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

func TestTestFunc(t *testing.T) {
	for fn, want := range map[string]string{
		"example.com/cache.TestGet":              "TestGet",
		"example.com/cache_test.TestGet.func1.2": "TestGet",
		"example.com/cache.TestGet$1":            "TestGet",
		"example.com/cache.TestGet$1$2":          "TestGet",
		"example.com/x/cache.Test_get":           "Test_get",
		"example.com/cache.Test":                 "Test",
		"example.com/cache.BenchmarkGet.func3":   "BenchmarkGet",
		"example.com/cache.ExampleCache":         "ExampleCache",
		"example.com/cache.FuzzParse":            "FuzzParse",
		"example.com/cache.Testify":              "",
		"example.com/cache.(*Cache).TestGet":     "",
		"(*example.com/cache.Cache).TestGet":     "",
		"example.com/cache.get":                  "",
		"main":                                   "",
		"":                                       "",
	} {
		if got := testFunc(fn); got != want {
			t.Errorf("testFunc(%q) = %q, want %q", fn, got, want)
		}
	}
}

// A finding names the top-level tests of its accesses' goroutines: a
// test's own goroutine (its first line's site), one its literal runs, one
// that the package's code starts on its behalf (the fork's parent's
// test); a goroutine of no test adds none.
func TestFindingTests(t *testing.T) {
	tr := &trace.Trace{
		Sites: []trace.Site{{},
			{File: "/src/c_test.go", Line: 10, Func: "example.com/c.TestInc"},
			{File: "/src/c.go", Line: 3, Func: "(*example.com/c.C).Inc"},
			{File: "/src/c_test.go", Line: 30, Func: "example.com/c_test.TestAdd.func1"},
			{File: "/src/c.go", Line: 9, Func: "example.com/c.init"},
		},
		Objects: map[trace.ObjID]trace.Object{0x10: {Kind: trace.ObjVar, Name: "c.n"}},
		Events: []trace.Event{
			{Seq: 0, G: 1, Kind: trace.KindFork, Arg: 2, Site: 4},
			{Seq: 1, G: 2, Kind: trace.KindWrite, Obj: 0x10, Site: 4}, // init's goroutine
			{Seq: 2, G: 1, Kind: trace.KindFork, Arg: 3},
			{Seq: 3, G: 3, Kind: trace.KindRead, Obj: 0x10, Site: 2},
			{Seq: 4, G: 3, Kind: trace.KindFork, Arg: 4, Site: 1}, // TestInc's goroutine starts g4
			{Seq: 5, G: 4, Kind: trace.KindWrite, Obj: 0x10, Site: 2},
			{Seq: 6, G: 1, Kind: trace.KindFork, Arg: 5},
			{Seq: 7, G: 5, Kind: trace.KindWrite, Obj: 0x10, Site: 3}, // TestAdd's literal
		},
	}
	finding := func(gs ...trace.GoID) predict.Finding {
		f := predict.Finding{Kind: predict.KindRace, Pattern: "W-W", Level: predict.LevelProven, Var: "c.n"}
		for _, g := range gs {
			f.Accesses = append(f.Accesses, predict.Access{G: g, Op: trace.KindWrite, Obj: 0x10, Site: 2})
		}
		return f
	}
	fs := []predict.Finding{finding(4, 5), finding(3, 4), finding(2, 4), finding(2, 1)}
	var text bytes.Buffer
	if err := Text(&text, tr, fs, TextOptions{Dir: "/src"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for line := range strings.SplitSeq(text.String(), "\n") {
		if strings.HasPrefix(line, "\ttest") {
			got = append(got, line)
		}
	}
	want := []string{"\ttests: TestAdd, TestInc", "\ttest: TestInc", "\ttest: TestInc"}
	if !slices.Equal(got, want) {
		t.Errorf("text: %q, want %q\n%s", got, want, text.String())
	}
	var doc Document
	var js bytes.Buffer
	if err := JSON(&js, tr, fs, Stats{}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var gotJSON [][]string
	for _, f := range doc.Findings {
		gotJSON = append(gotJSON, f.Tests)
	}
	wantJSON := [][]string{{"TestAdd", "TestInc"}, {"TestInc"}, {"TestInc"}, nil}
	if !slices.EqualFunc(gotJSON, wantJSON, slices.Equal) {
		t.Errorf("JSON tests: %q, want %q", gotJSON, wantJSON)
	}
	if strings.Count(js.String(), `"tests"`) != 3 {
		t.Errorf("the JSON report has a tests field for a finding of no test:\n%s", js.String())
	}
}
