package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

func TestOutputMode(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		mode  vetOutput
		child []string
		err   string
	}{
		{[]string{"./..."}, outputText, []string{"./..."}, ""},
		{[]string{"-json", "./..."}, outputJSON, []string{"-json", "./..."}, ""},
		{[]string{"--json=true", "./..."}, outputJSON, []string{"--json=true", "./..."}, ""},
		{[]string{"-json=false", "./..."}, outputText, []string{"-json=false", "./..."}, ""},
		{[]string{"-sarif", "-regions.maxd=3", "./..."}, outputSARIF, []string{"-json", "-regions.maxd=3", "./..."}, ""},
		{[]string{"-sarif=false", "./..."}, outputText, []string{"./..."}, ""},
		// Flags end at the first package; what follows is left alone.
		{[]string{"./a", "-sarif"}, outputText, []string{"./a", "-sarif"}, ""},
		{[]string{"--", "-sarif"}, outputText, []string{"--", "-sarif"}, ""},
		// A flag's value in the next argument is not a package.
		{[]string{"-c", "1", "-sarif", "./..."}, outputSARIF, []string{"-json", "-c", "1", "./..."}, ""},
		{[]string{"-avreport.report", "r.json", "-json", "./..."}, outputJSON, []string{"-avreport.report", "r.json", "-json", "./..."}, ""},
		{[]string{"-regions.maxd", "3", "-sarif", "./..."}, outputSARIF, []string{"-json", "-regions.maxd", "3", "./..."}, ""},
		{[]string{"-test", "./a", "-sarif"}, outputText, []string{"-test", "./a", "-sarif"}, ""},
		{[]string{"-regions", "./a", "-sarif"}, outputText, []string{"-regions", "./a", "-sarif"}, ""},
		{[]string{"-json", "-sarif", "./..."}, 0, nil, "-json and -sarif cannot be used together"},
		{[]string{"-sarif=maybe", "./..."}, 0, nil, `invalid boolean value "maybe" for -sarif`},
	} {
		mode, child, err := outputMode(tc.args)
		var got string
		if err != nil {
			got = err.Error()
		}
		if mode != tc.mode || !reflect.DeepEqual(child, tc.child) || got != tc.err {
			t.Errorf("outputMode(%q) = %v, %q, %q; want %v, %q, %q", tc.args, mode, child, got, tc.mode, tc.child, tc.err)
		}
	}
}

func TestFirstPattern(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prdict", "x"}, "prdict"},
		{[]string{"-json", "prdict"}, "prdict"},
		{[]string{"-c", "1", "prdict"}, "prdict"},
		{[]string{"-avreport.hash", "abc", "prdict"}, "prdict"},
		{[]string{"-c=1", "prdict"}, "prdict"},
		{[]string{"-test", "prdict"}, "prdict"},
		{[]string{"--", "prdict"}, "prdict"},
		{[]string{"-c"}, ""},
	} {
		if got := firstPattern(tc.args); got != tc.want {
			t.Errorf("firstPattern(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestParsePosn(t *testing.T) {
	for _, tc := range []struct {
		posn string
		want trace.Site
	}{
		{"/src/a.go:3:4", trace.Site{File: "/src/a.go", Line: 3, Col: 4}},
		{"/src/a.go:3", trace.Site{File: "/src/a.go", Line: 3}},
		{`C:\src\a.go:12:1`, trace.Site{File: `C:\src\a.go`, Line: 12, Col: 1}},
		{"/src/a:b.go:7:2", trace.Site{File: "/src/a:b.go", Line: 7, Col: 2}},
		{"-", trace.Site{}},
	} {
		if got := parsePosn(tc.posn); got != tc.want {
			t.Errorf("parsePosn(%q) = %+v, want %+v", tc.posn, got, tc.want)
		}
	}
}

// The multichecker's tree becomes go vet's: the test variant named as
// the package and replacing it, the cascade of a package that does not
// build dropped, real failures kept.
func TestNormalizeVetJSON(t *testing.T) {
	in := `{
	"example.com/p": {"splitlock": [{"posn": "/p/a.go:1:1", "end": "/p/a.go:1:1", "message": "without tests"}]},
	"example.com/p [example.com/p.test]": {"splitlock": [{"posn": "/p/a.go:1:1", "end": "/p/a.go:1:1", "message": "with tests"}]},
	"example.com/q": {
		"annotation": {"error": "analysis skipped due to errors in package"},
		"splitlock": {"error": "failed prerequisites: annotation@example.com/q, regions@example.com/q"}
	},
	"example.com/r": {"guardedby": {"error": "guardedby: internal error"}}
}`
	tree, diags, errs, err := normalizeVetJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if diags != 1 || errs != 1 {
		t.Errorf("%d diagnostics, %d errors; want 1 and 1", diags, errs)
	}
	var buf bytes.Buffer
	if err := tree.print(&buf); err != nil {
		t.Fatal(err)
	}
	want := `{
	"example.com/p": {
		"splitlock": [
			{
				"posn": "/p/a.go:1:1",
				"end": "/p/a.go:1:1",
				"message": "with tests"
			}
		]
	},
	"example.com/r": {
		"guardedby": {
			"error": "guardedby: internal error"
		}
	}
}
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}

	if _, _, _, err := normalizeVetJSON([]byte("not json")); err == nil {
		t.Errorf("no error for output that is not JSON")
	}
}

func TestWriteVetOutputCodes(t *testing.T) {
	clean, findings := `{}`, `{"p": {"splitlock": [{"posn": "/p/a.go:1:1", "end": "/p/a.go:1:1", "message": "m"}]}}`
	failed := `{"p": {"guardedby": {"error": "internal error"}}}`
	for _, tc := range []struct {
		data      string
		childCode int
		want      int
	}{
		{clean, 0, 0},
		{findings, 0, 3},
		{failed, 0, 1},
		{findings, 1, 1}, // some package did not build
		{"", 1, 1},       // nothing could be loaded
	} {
		for _, mode := range []vetOutput{outputJSON, outputSARIF} {
			var buf bytes.Buffer
			code, err := writeVetOutput(&buf, mode, []byte(tc.data), tc.childCode)
			if err != nil || code != tc.want {
				t.Errorf("writeVetOutput(%v, %q, %d) = %d, %v; want %d", mode, tc.data, tc.childCode, code, err, tc.want)
			}
			if mode == outputSARIF && !strings.Contains(buf.String(), `"version": "2.1.0"`) {
				t.Errorf("no SARIF log for %q:\n%s", tc.data, buf.String())
			}
		}
	}
}
