package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readSTD(t *testing.T, src string) (*Trace, error) {
	t.Helper()
	return ReadAll(NewSTDReader(strings.NewReader(src), "t.std"))
}

func writeSTD(t *testing.T, tr *Trace) (std, table string) {
	t.Helper()
	var s, tb bytes.Buffer
	if err := WriteTrace(NewSTDWriter(&s, &tb), tr); err != nil {
		t.Fatal(err)
	}
	return s.String(), tb.String()
}

func TestSTDRead(t *testing.T) {
	src := `T0|fork(T1)|3
T1|acq(L1)|11
T1|r(V1)|12
T1|w(V1)|5
T1|rel(L1)|6
T0|begin|7
T0|r(V2)|8
T0|end|9
T0|join(T1)|4 	
`
	tr, err := readSTD(t, src)
	if err != nil {
		t.Fatal(err)
	}
	want := `avtrace 1
obj 0x1 mutex L1
obj 0x2 var V2
obj 0x1000000000000 var V1
obj 0x1000000000001 chan join:T1
g0 fork g1 @3
g1 acq 0x1 @11
g1 rd 0x1000000000000 @12
g1 wr 0x1000000000000 @5
g1 rel 0x1 @6
g0 begin @7 region=1.1
g0 rd 0x2 @8 region=1.1
g0 finish @9 region=1.1
g1 close 0x1000000000001 @4
g1 end @4
g0 recv 0x1000000000001 @4 msg=0
`
	if got := writeText(t, tr); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := Validate(tr); err != nil {
		t.Errorf("imported trace is invalid: %v", err)
	}
}

// TestSTDNames checks that other names get fresh ids, separately for
// threads, variables and locks.
func TestSTDNames(t *testing.T) {
	tr, err := readSTD(t, "main|w(counter)|0\nmain|acq(counter)|2\nworker|r(V1)|0\nworker|acq(V1)|0\nmain|r(counter)|0\n")
	if err != nil {
		t.Fatal(err)
	}
	want := `avtrace 1
obj 0x1 var V1
obj 0x1000000000000 var counter
obj 0x1000000000001 mutex counter
obj 0x1000000000002 mutex V1
g2147483648 wr 0x1000000000000
g2147483648 acq 0x1000000000001 @2
g2147483649 rd 0x1
g2147483649 acq 0x1000000000002
g2147483648 rd 0x1000000000000
`
	if got := writeText(t, tr); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestSTDRoundTrip checks STD -> avcheck -> STD is the identity on the
// STD vocabulary.
func TestSTDRoundTrip(t *testing.T) {
	src := `T0|fork(T1)|3
T0|fork(T2)|3
T1|acq(L10)|11
T1|r(V1)|12
T1|w(V1)|5
T1|rel(L10)|6
T2|begin|7
T2|r(V2)|8
T2|begin|7
T2|w(V3)|8
T2|end|9
T2|end|9
T0|join(T1)|4
T0|join(T2)|4
T0|r(V1)|0
`
	tr, err := readSTD(t, src)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := writeSTD(t, tr)
	if got != src {
		t.Errorf("round trip:\n%s\nwant:\n%s", got, src)
	}
}

// TestSTDExportImport checks avcheck -> STD (+ table) -> avcheck keeps
// every event STD can express, and encodes the others as documented.
func TestSTDExportImport(t *testing.T) {
	src := `avtrace 1
site 3 counter.go:12:3 (*Counter).Inc
obj 0x10 var c.n
obj 0x20 mutex c.mu
obj 0x30 chan ch cap=1
g1 fork g2 @3
g2 acq c.mu @3
g2 rd c.n @3
g2 wr c.n @3
g2 rel c.mu @3
g2 send ch
g1 recv ch
g1 aload c.n
`
	tr, err := readText(t, src)
	if err != nil {
		t.Fatal(err)
	}
	std, table := writeSTD(t, tr)
	wantSTD := `T1|fork(T2)|3
T2|acq(L32)|3
T2|r(V16)|3
T2|w(V16)|3
T2|rel(L32)|3
T2|acq(L48)|0
T2|rel(L48)|0
T1|acq(L48)|0
T1|rel(L48)|0
T1|acq(L16)|0
T1|r(V16)|0
T1|rel(L16)|0
`
	if std != wantSTD {
		t.Errorf("STD:\n%s\nwant:\n%s", std, wantSTD)
	}
	wantTable := `avtrace 1
site 3 counter.go:12:3 (*Counter).Inc
obj 0x10 var c.n
obj 0x20 mutex c.mu
obj 0x30 mutex ch
`
	if table != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", table, wantTable)
	}
	r := NewSTDReader(strings.NewReader(std), "t.std")
	if err := r.ReadTable(strings.NewReader(table), "t.std.sites"); err != nil {
		t.Fatal(err)
	}
	back, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `avtrace 1
site 3 counter.go:12:3 (*Counter).Inc
obj 0x10 var c.n
obj 0x20 mutex c.mu
obj 0x30 mutex ch
obj 0x1000000000000 mutex L16
g1 fork g2 @3
g2 acq 0x20 @3
g2 rd 0x10 @3
g2 wr 0x10 @3
g2 rel 0x20 @3
g2 acq 0x30
g2 rel 0x30
g1 acq 0x30
g1 rel 0x30
g1 acq 0x1000000000000
g1 rd 0x10
g1 rel 0x1000000000000
`
	if got := writeText(t, back); got != want {
		t.Errorf("imported:\n%s\nwant:\n%s", got, want)
	}
}

func TestSTDErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"T0\n", `t.std:1: want THREAD|OP(OPERAND)|LOCATION, found "T0"`},
		{"T0|r(V1)\n", `t.std:1: want three fields separated by |, found "T0|r(V1)"`},
		{"T0|r(V1)|1|2\n", `t.std:1: want exactly three fields separated by |, found "T0|r(V1)|1|2"`},
		{"T0|r(V1)|x\n", `t.std:1: location must be a non-negative integer, found "x"`},
		{"T0|r(V1)|-1\n", `t.std:1: location must be a non-negative integer, found "-1"`},
		{"T0|rd(V1)|1\n", `t.std:1: unknown STD operation "rd" (want r, w, acq, rel, fork, join, begin or end)`},
		{"T0|r(V1|1\n", `t.std:1: missing ) in "r(V1"`},
		{"T0|r|1\n", `t.std:1: r needs an operand in parentheses`},
		{"T0|r()|1\n", `t.std:1: r needs an operand in parentheses`},
		{"T0|r(a(b))|1\n", `t.std:1: bad operand "a(b)"`},
		{"|r(V1)|1\n", `t.std:1: bad thread ""`},
		{"T0|r(V1)|1\nT0|fork()|1\n", `t.std:2: fork needs an operand in parentheses`},
	}
	for _, tt := range tests {
		_, err := readSTD(t, tt.in)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%q: got %v, want a *FormatError", tt.in, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestSTDTableErrors(t *testing.T) {
	r := NewSTDReader(strings.NewReader(""), "t.std")
	err := r.ReadTable(strings.NewReader("avtrace 1\ng1 rd x\n"), "t.std.sites")
	want := `t.std.sites:2: unexpected event "g1 rd 0x1" in a site table`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestOpenDetect(t *testing.T) {
	dir := t.TempDir()
	tr, err := readText(t, `avtrace 1
site 3 counter.go:12:3 (*Counter).Inc
obj 0x10 var c.n
obj 0x20 mutex c.mu
g1 fork g2 @3
g2 acq c.mu @3
g2 wr c.n @3 v=1
g2 rel c.mu @3
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatNative, FormatText, FormatSTD} {
		path := filepath.Join(dir, "trace."+f.String())
		if _, err := WriteFile(path, f, tr.Stream()); err != nil {
			t.Fatal(err)
		}
		for _, open := range []Format{FormatAuto, f} {
			file, err := Open(path, open)
			if err != nil {
				t.Fatal(err)
			}
			if file.Format != f {
				t.Errorf("%s opened as %v, want %v", path, file.Format, f)
			}
			got, err := ReadAll(file)
			file.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := writeText(t, tr)
			if f == FormatSTD {
				// STD carries no values.
				want = strings.Replace(want, " v=1", "", 1)
			}
			if g := writeText(t, got); g != want {
				t.Errorf("%v via %v:\n%s\nwant:\n%s", f, open, g, want)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("WriteFile left %d files, want 4 (no temporaries)", len(entries))
	}
	// Errors name the file.
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("avtrace 1\ng1 rdd x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	file, err := Open(bad, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := ReadAll(file); err == nil || err.Error() != `bad.txt:2: unknown event kind "rdd"` {
		t.Errorf("got %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing"), FormatAuto); err == nil {
		t.Error("opening a missing file succeeded")
	}
}

// Detection reads past any number of comment lines to the header; a file
// of nothing else is an empty trace, in no format.
func TestOpenDetectPastComments(t *testing.T) {
	dir := t.TempDir()
	comments := strings.Repeat("# "+strings.Repeat("x", 77)+"\n", 1000) // 80 KB, more than a buffer
	for _, tc := range []struct {
		content string
		want    Format
		err     string
	}{
		{comments + "avtrace 1\ng1 rd x\n", FormatText, ""},
		{comments + "T0|r(V1)|1\n", FormatSTD, ""},
		{"# " + strings.Repeat("y", 100000) + "\navtrace 1\ng1 rd x\n", FormatText, ""},
		{"", 0, "t.trace:1: empty trace: no header and no events"},
		{comments, 0, "t.trace:1: empty trace: no header and no events"},
	} {
		path := filepath.Join(dir, "t.trace")
		if err := os.WriteFile(path, []byte(tc.content), 0o666); err != nil {
			t.Fatal(err)
		}
		file, err := Open(path, FormatAuto)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%.20q...: got %v, want %s", tc.content, err, tc.err)
			}
			if err == nil {
				file.Close()
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		tr, err := ReadAll(file)
		file.Close()
		if file.Format != tc.want || err != nil || len(tr.Events) != 1 {
			t.Errorf("%.20q...: format %v, %v, %d events; want %v and one event", tc.content, file.Format, err, len(tr.Events), tc.want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range []Format{FormatAuto, FormatNative, FormatText, FormatSTD} {
		if g, err := ParseFormat(f.String()); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f, g, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || err.Error() != `unknown trace format "xml" (want auto, native, text or std)` {
		t.Errorf("got %v", err)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		in   string
		want Format
	}{
		{binaryMagic + "\x01", FormatNative},
		{"avtrace 1\n", FormatText},
		{"# comment\n\n  avtrace 1\n", FormatText},
		{"T0|r(V1)|1\n", FormatSTD},
		{"# comment\nT0|r(V1)|1\n", FormatSTD},
		{"", FormatSTD},
		{"\n# only comments\n", FormatSTD},
	}
	for _, tt := range tests {
		if got := Detect([]byte(tt.in)); got != tt.want {
			t.Errorf("Detect(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCreateAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.std")
	w, err := Create(path, FormatSTD)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DeclareSite(1, Site{File: "a.go", Line: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Event{G: 1, Kind: KindRead, Obj: 1, Site: 1}); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Abort left %d files", len(entries))
	}
	w, err = Create(path, FormatSTD)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Event{G: 1, Kind: KindRead, Obj: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Abort() // no effect after Close
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "T1|r(V1)|0\n" {
		t.Errorf("file holds %q, %v", data, err)
	}
	if _, err := os.Stat(path + ".sites"); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files, want the trace and its table", len(entries))
	}
}

// TestSTDTruncations cuts and mutates canonical lines at every byte: the
// fast path must neither panic nor disagree with the general parser.
func TestSTDTruncations(t *testing.T) {
	lines := []string{
		"T123456789|fork(T123456789)|4294967295",
		"T1|r(V123456789)|12", "T1|w(V1)|1", "T1|acq(L1)|1", "T1|rel(L22)|1",
	}
	for _, line := range lines {
		for cut := 0; cut <= len(line); cut++ {
			for _, c := range []byte{0, '|', '(', ')', 'T', '9', 'x'} {
				variants := []string{line[:cut]}
				if cut < len(line) {
					variants = append(variants, line[:cut]+string(c)+line[cut+1:])
				}
				for _, v := range variants {
					fast, err1 := ReadAll(NewSTDReader(strings.NewReader(v), "t.std"))
					slowR := NewSTDReader(strings.NewReader(v), "t.std")
					slowR.slowOnly = true
					slow, err2 := ReadAll(slowR)
					if (err1 == nil) != (err2 == nil) {
						t.Fatalf("%q: %v and %v", v, err1, err2)
					}
					if err1 == nil && writeText(t, fast) != writeText(t, slow) {
						t.Fatalf("%q: parsers disagree", v)
					}
				}
			}
		}
	}
}
