package main_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decodeStream decodes a stream of JSON objects, as go vet -json prints
// one per package, into one tree.
func decodeStream(t *testing.T, s string) map[string]any {
	t.Helper()
	tree := map[string]any{}
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if err == io.EOF {
			return tree
		}
		if err != nil {
			t.Fatalf("not a stream of JSON objects: %v\n%s", err, s)
		}
		for k, v := range obj {
			tree[k] = v
		}
	}
}

// avcheck -json prints what go vet -json -vettool=avcheck prints for the
// same packages: the same tree, the same package IDs, the same
// diagnostics; for a clean package nothing but {}; for a package that
// does not build, the compiler's error on standard error and no entry.
func TestSuiteJSONMatchesVet(t *testing.T) {
	bin := avcheck(t)
	for _, tc := range []struct {
		pkg       string
		code      int // avcheck's; go vet -json exits 0 unless a package does not build
		vetCode   int
		wantEmpty bool
	}{
		{"./testdata/example/bank", 3, 0, false},
		{"./testdata/example/fixed", 0, 0, true},
		{"./testdata/broken", 1, 1, true},
	} {
		out, errOut, code := run(t, bin, "-json", tc.pkg)
		vetOut, vetErr, vetCode := run(t, "go", "vet", "-json", "-vettool="+bin, tc.pkg)
		if code != tc.code || vetCode != tc.vetCode {
			t.Errorf("%s: avcheck -json exit %d, go vet -json exit %d; want %d and %d\n%s\n%s", tc.pkg, code, vetCode, tc.code, tc.vetCode, errOut, vetErr)
		}
		// avcheck prints one object, go vet one per package.
		var own map[string]any
		if err := json.Unmarshal([]byte(out), &own); err != nil {
			t.Fatalf("%s: avcheck -json did not print one JSON object: %v\n%s", tc.pkg, err, out)
		}
		vet := decodeStream(t, vetOut)
		if !reflect.DeepEqual(own, vet) {
			t.Errorf("%s: avcheck -json:\n%s\ngo vet -json:\n%s", tc.pkg, out, vetOut)
		}
		if tc.wantEmpty != (len(own) == 0) {
			t.Errorf("%s: %d packages in the tree\n%s", tc.pkg, len(own), out)
		}
		if tc.code == 1 {
			const msg = `testdata/broken/broken.go:3:23: cannot use "x" (untyped string constant) as int value in return statement`
			if strings.TrimSpace(errOut) != msg || !strings.Contains(vetErr, msg) {
				t.Errorf("%s: standard error:\n%s\nwant the compiler's error alone, as go vet prints it:\n%s", tc.pkg, errOut, vetErr)
			}
		}
	}
	// The tree has the shape of the analysis drivers' JSON: package ID,
	// analyzer, diagnostics with posn, end, message, category, related.
	out, _, _ := run(t, bin, "-json", "./testdata/example/bank")
	var tree map[string]map[string][]struct {
		Category string `json:"category"`
		Posn     string `json:"posn"`
		End      string `json:"end"`
		Message  string `json:"message"`
		Related  []struct {
			Posn    string `json:"posn"`
			End     string `json:"end"`
			Message string `json:"message"`
		} `json:"related"`
	}
	if err := json.Unmarshal([]byte(out), &tree); err != nil {
		t.Fatal(err)
	}
	diags := tree["github.com/avcheck/avcheck/testdata/example/bank"]["splitlock"]
	if len(tree) != 1 || len(diags) != 2 || diags[0].Category != "split-critical-section" ||
		!strings.HasSuffix(diags[0].Posn, filepath.Join("testdata", "example", "bank", "bank.go")+":36:5") || len(diags[0].Related) != 1 {
		t.Errorf("unexpected tree:\n%s", out)
	}
}

// Every mode exits 0 when clean, 3 with findings, 1 on an error, 2 on bad
// usage; an error is one line, a usage error one line and the usage line.
func TestExitCodes(t *testing.T) {
	bin := avcheck(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	findings := write("findings.txt", "avtrace 1\ng1 fork g2\ng1 acq mu region=1.1\ng1 rd c.n @c.go:3:2 region=1.1\ng1 rel mu region=1.1\ng1 acq mu region=1.1\ng1 wr c.n @c.go:4:2 region=1.1\ng1 rel mu region=1.1\ng2 acq mu\ng2 wr c.n @c.go:9:2\ng2 rel mu\n")
	clean := write("clean.txt", "avtrace 1\ng1 fork g2\ng1 acq mu\ng1 wr c.n @c.go:3:2\ng1 rel mu\ng2 acq mu\ng2 wr c.n @c.go:9:2\ng2 rel mu\n")
	malformed := write("bad.txt", "avtrace 1\ng1 rdd c.n\n")
	missing := filepath.Join(dir, "missing.avt")

	for _, tc := range []struct {
		args  []string
		code  int
		first string // the first line of standard error, for codes 1 and 2
	}{
		// The standalone suite, in each output mode.
		{[]string{"./testdata/example/fixed"}, 0, ""},
		{[]string{"./testdata/example/bank"}, 3, ""},
		{[]string{"./testdata/broken"}, 1, `testdata/broken/broken.go:3:23: cannot use "x" (untyped string constant) as int value in return statement`},
		{[]string{"./testdata/nosuchdir"}, 1, "avcheck: stat testdata/nosuchdir: directory not found"},
		{[]string{"-nosuchflag", "./testdata/example/fixed"}, 2, "avcheck: flag provided but not defined: -nosuchflag"},
		{[]string{"-regions.maxd=x", "./testdata/example/fixed"}, 2, `avcheck: invalid value "x" for flag -regions.maxd: parse error`},
		{[]string{}, 2, "usage: avcheck [-json|-sarif] [-flag...] package... (avcheck help for the subcommands and analyzers, avcheck -h for every flag)"},
		{[]string{"-json", "./testdata/example/fixed"}, 0, ""},
		{[]string{"-json", "./testdata/example/bank"}, 3, ""},
		{[]string{"-json", "./testdata/broken"}, 1, `testdata/broken/broken.go:3:23: cannot use "x" (untyped string constant) as int value in return statement`},
		{[]string{"-json", "-nosuchflag", "./testdata/example/fixed"}, 2, "avcheck: flag provided but not defined: -nosuchflag"},
		{[]string{"-sarif", "./testdata/example/fixed"}, 0, ""},
		{[]string{"-sarif", "./testdata/example/bank"}, 3, ""},
		{[]string{"-json", "-sarif", "./testdata/example/fixed"}, 2, "avcheck: -json and -sarif cannot be used together"},
		{[]string{"-sarif=maybe", "./testdata/example/fixed"}, 2, `avcheck: invalid boolean value "maybe" for -sarif`},
		// help and unknown subcommands.
		{[]string{"help"}, 0, ""},
		{[]string{"help", "splitlock"}, 0, ""},
		{[]string{"help", "predict"}, 0, ""},
		{[]string{"help", "nosuch"}, 2, `avcheck help: "nosuch" is neither an analyzer nor a subcommand (avcheck help lists them)`},
		{[]string{"prdict", "trace.avt"}, 2, `avcheck: "prdict" is neither a subcommand (`},
		// predict.
		{[]string{"predict", findings}, 3, ""},
		{[]string{"predict", clean}, 0, ""},
		{[]string{"predict", "-json", findings}, 3, ""},
		{[]string{"predict", "-sarif", clean}, 0, ""},
		{[]string{"predict", "-sarif", findings}, 3, ""},
		{[]string{"predict", malformed}, 1, `bad.txt:2: unknown event kind "rdd"`},
		{[]string{"predict", missing}, 1, "avcheck predict: " + missing + ": no such file or directory"},
		{[]string{"predict"}, 2, "avcheck predict: no trace file given"},
		{[]string{"predict", "-bogus", clean}, 2, "avcheck predict: flag provided but not defined: -bogus"},
		{[]string{"predict", "-json", "-sarif", clean}, 2, "avcheck predict: -json and -sarif cannot be used together"},
		// run: its findings and crashes are tested in run_test.go.
		{[]string{"run", "-bogus"}, 2, "avcheck run: flag provided but not defined: -bogus"},
		{[]string{"run", "-json", "-sarif", "."}, 2, "avcheck run: -json and -sarif cannot be used together"},
		{[]string{"run", "./testdata/broken"}, 1, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, code := run(t, bin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			first, _, _ := strings.Cut(stderr, "\n")
			if !strings.HasPrefix(first, tc.first) {
				t.Errorf("first line of standard error %q, want %q\n%s", first, tc.first, stderr)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			switch {
			case tc.code == 2 && tc.first != "" && !strings.HasPrefix(tc.first, "usage:") && (len(lines) != 2 || !strings.HasPrefix(lines[1], "usage: ")):
				t.Errorf("want one error line and the usage line, got:\n%s", stderr)
			case tc.code == 1 && tc.first != "" && len(lines) != 1:
				t.Errorf("want one error line, got:\n%s", stderr)
			}
		})
	}
}
