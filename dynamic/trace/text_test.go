package trace

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/internal/intent"
)

// readText reads a text trace and renders it back with its tables, the
// form the text tests compare.
func readText(t *testing.T, src string) (*Trace, error) {
	t.Helper()
	return ReadAll(NewTextReader(strings.NewReader(src), "trace.txt"))
}

func writeText(t *testing.T, tr *Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTrace(NewTextWriter(&b), tr); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTextRead(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "declared",
			in: `# a comment, then the header
avtrace 1

site 3 counter.go:12:3 (*Counter).Inc
obj 0x10 var c.n
obj 0x20 mutex c.mu
obj 0x30 chan ch cap=1
g1 acq 0x20 @3
g1 rd 0x10 @3 region=2.1 br=1 v=5   # trailing comment
g1 rel c.mu @3
g1 send ch msg=1
`,
			want: `avtrace 1
site 3 counter.go:12:3 (*Counter).Inc
obj 0x10 var c.n
obj 0x20 mutex c.mu
obj 0x30 chan ch cap=1
g1 acq 0x20 @3
g1 rd 0x10 @3 region=2.1 br=1 v=5
g1 rel 0x20 @3
g1 send 0x30 msg=1
`,
		},
		{
			name: "symbolic",
			in: `avtrace 1
g1 fork g2
g1 acq mu @c.go:4
g1 wr x v=-1
g1 rel mu @c.go:4
g2 racq rw
g2 rrel rw
g2 send ch
g2 send ch
g1 recv ch
g1 recv ch
g2 close ch
g1 recv ch
g1 wgadd wg
g1 wgadd wg delta=-1
g1 once o
g2 once o
g1 begin region=4
g1 finish region=4
g2 end
`,
			want: `avtrace 1
site 1 c.go:4:0
obj 0x1 mutex mu
obj 0x2 var x
obj 0x3 rwmutex rw
obj 0x4 chan ch
obj 0x5 waitgroup wg
obj 0x6 once o
g1 fork g2
g1 acq 0x1 @1
g1 wr 0x2 v=18446744073709551615
g1 rel 0x1 @1
g2 racq 0x3
g2 rrel 0x3
g2 send 0x4 msg=1
g2 send 0x4 msg=2
g1 recv 0x4 msg=1
g1 recv 0x4 msg=2
g2 close 0x4
g1 recv 0x4 msg=0
g1 wgadd 0x5 delta=1
g1 wgadd 0x5 delta=-1
g1 once 0x6 ran=1
g2 once 0x6 ran=0
g1 begin region=4
g1 finish region=4
g2 end
`,
		},
		{
			name: "seq and quoting",
			in: `avtrace 1
site 1 "dir with space/a.go:1:2" "F[int, string]"
obj 0x7 var "a b"
obj 0x8 var ""
g3 rd "a b" seq=10
g3 rd 0x8
g3 aload 0x8 seq=20 arg=7
`,
			want: `avtrace 1
site 1 "dir with space/a.go:1:2" "F[int, string]"
obj 0x7 var "a b"
obj 0x8 var
g3 rd 0x7 seq=10
g3 rd 0x8
g3 aload 0x8 arg=7 seq=20
`,
		},
		{
			name: "empty",
			in:   "avtrace 1\n",
			want: "avtrace 1\n",
		},
		{
			name: "crlf and no final newline",
			in:   "avtrace 1\r\ng1 rd 0x1\r\ng1 end",
			want: "avtrace 1\ng1 rd 0x1\ng1 end\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := readText(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := writeText(t, tr); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestTextRange checks that a read's range and its length flag survive
// the text format, written as range= and flags=.
func TestTextRange(t *testing.T) {
	in := `avtrace 1
g1 rd 0x10 v=1 range=..3
g1 rd 0x10 v=2 range=1.. flags=4
g1 rd 0x10 v=2 range=-5..7
g1 rd 0x10 v=0 range=..
g1 rd 0x10 v=7 range=7..7
`
	tr, err := readText(t, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Range{
		{math.MinInt64, 3},
		{1, math.MaxInt64},
		{-5, 7},
		{math.MinInt64, math.MaxInt64},
		{7, 7},
	}
	for i, e := range tr.Events {
		got, ok := e.Range()
		if !ok || got != want[i] {
			t.Errorf("event %d: range %v, %v; want %v", i, got, ok, want[i])
		}
	}
	if tr.Events[1].Flags != HasValue|HasRange|ValueIsLen {
		t.Errorf("event 1: flags %d, want value, range and length", tr.Events[1].Flags)
	}
	if got := writeText(t, tr); got != in {
		t.Errorf("written back:\n%s\nwant:\n%s", got, in)
	}
	if err := Validate(tr); err != nil {
		t.Errorf("validate: %v", err)
	}
	w := Event{Kind: KindWrite, G: 1, Flags: HasValue | ValueIsLen}
	if err := Validate(&Trace{Events: []Event{w}}); err == nil || !strings.Contains(err.Error(), "a range or a length needs a read with a value") {
		t.Errorf("validate a write with a length: %v", err)
	}
	for _, e := range []Event{
		{Kind: KindWrite, G: 1, Value: 0x100, Flags: HasValue | ValueIsAddr},
		{Kind: KindRead, G: 1, Flags: ValueIsAddr},
		{Kind: KindRead, G: 1, Value: 3, Flags: HasValue | ValueIsLen | ValueIsAddr},
	} {
		if err := Validate(&Trace{Events: []Event{e}}); err == nil || !strings.Contains(err.Error(), "an address needs a read with a value") {
			t.Errorf("validate %v: %v", e, err)
		}
	}
	addr := Event{Kind: KindRead, G: 1, Value: 0x100, Arg: 8, Flags: HasValue | ValueIsAddr}
	if err := Validate(&Trace{Events: []Event{addr}}); err != nil {
		t.Errorf("validate a read of an address: %v", err)
	}
}

// TestTextConstWrite checks that a write of a constant survives the text
// and native formats, written as flags=64 beside its v=, and that the
// validator accepts the flag on a write with a value only.
func TestTextConstWrite(t *testing.T) {
	in := `avtrace 1
g1 wr 0x10 v=1 flags=64
g1 wr 0x18 v=0 flags=72
g1 wr 0x10 v=1
`
	tr, err := readText(t, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []Flags{HasValue | ValueConst, HasValue | ValueConst | AddrVaries, HasValue} {
		if got := tr.Events[i].Flags; got != want {
			t.Errorf("event %d: flags %#x, want %#x", i, got, want)
		}
	}
	if got := writeText(t, tr); got != in {
		t.Errorf("written back:\n%s\nwant:\n%s", got, in)
	}
	back, err := ReadAll(NewBinaryReader(bytes.NewReader(encodeBinary(t, tr)), "t.avt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := writeText(t, back); got != in {
		t.Errorf("native round trip:\n%s\nwant:\n%s", got, in)
	}
	if err := Validate(tr); err != nil {
		t.Errorf("validate: %v", err)
	}
	for _, e := range []Event{
		{Kind: KindWrite, G: 1, Flags: ValueConst},
		{Kind: KindRead, G: 1, Value: 1, Flags: HasValue | ValueConst},
		{Kind: KindAtomicStore, G: 1, Value: 1, Flags: HasValue | ValueConst},
	} {
		if err := Validate(&Trace{Events: []Event{e}}); err == nil || !strings.Contains(err.Error(), "a constant value needs a write with a value") {
			t.Errorf("validate %v: %v", e, err)
		}
	}
}

// TestTextIntent checks that a region's intent survives the text and
// native formats, written as intent=, that a trace without it reads as
// intent.Unstated, and that the validator rejects an unknown kind.
func TestTextIntent(t *testing.T) {
	in := `avtrace 1
site 1 c.go:20:7
site 2 c.go:23:2
g1 begin region=1.1 intent=write-back,1,2
g1 rd 0x10 @1 region=1.1
g1 wr 0x10 @2 region=1.1
g1 finish region=1.1
g1 begin region=2.1 intent=none
g1 finish region=2.1
g1 begin region=3.1 intent=critical-section
g1 finish region=3.1
g1 begin region=4.1
g1 finish region=4.1
`
	tr, err := readText(t, in)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		ev       intent.Evidence
		from, to SiteID
	}
	want := map[RegionID]got{1: {intent.WriteBack, 1, 2}, 2: {intent.None, 0, 0}, 3: {intent.CriticalSection, 0, 0}, 4: {intent.Unstated, 0, 0}}
	for _, e := range tr.Events {
		if e.Kind != KindRegionBegin {
			continue
		}
		ev, from, to := e.Intent()
		if g := (got{ev, from, to}); g != want[e.Region] {
			t.Errorf("region %d: intent %v, want %v", e.Region, g, want[e.Region])
		}
	}
	if w := writeText(t, tr); w != in {
		t.Errorf("written back:\n%s\nwant:\n%s", w, in)
	}
	back, err := ReadAll(NewBinaryReader(bytes.NewReader(encodeBinary(t, tr)), "t.avt"))
	if err != nil {
		t.Fatal(err)
	}
	if w := writeText(t, back); w != in {
		t.Errorf("native round trip:\n%s\nwant:\n%s", w, in)
	}
	if err := Validate(tr); err != nil {
		t.Errorf("validate: %v", err)
	}
	for _, bad := range []string{"g1 begin region=1.1 intent=guess", "g1 begin region=1.1 intent=branch,1", "g1 rd 0x10 intent=none"} {
		if _, err := readText(t, "avtrace 1\n"+bad+"\n"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	odd := Event{Kind: KindRegionBegin, G: 1, Region: 1, Arg: 200}
	if err := Validate(&Trace{Events: []Event{odd}}); err == nil || !strings.Contains(err.Error(), "not a kind of evidence") {
		t.Errorf("validate an unknown intent: %v", err)
	}
}

// TestIntentSitesStreamed checks that the sites a region's intent names
// are declared when a trace is streamed (Copy, ReadAhead) even though no
// event happens at them: a region whose write-back is never reached, or
// whose evidence is at a position the run recorded no access at, still
// says where its evidence is.
func TestIntentSitesStreamed(t *testing.T) {
	in := `avtrace 1
site 3 c.go:30:1
site 1 c.go:20:7
site 2 c.go:23:2
g1 begin @3 region=1.1 intent=branch,1,2
g1 finish region=1.1
`
	tr, err := readText(t, in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := Copy(NewTextWriter(&b), tr.Stream()); err != nil {
		t.Fatal(err)
	}
	if b.String() != in {
		t.Errorf("Copy wrote:\n%s\nwant:\n%s", b.String(), in)
	}
	back, err := ReadAll(ReadAhead(NewTextReader(strings.NewReader(in), "trace.txt"), NewValidator(nil)))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[SiteID]string{1: "c.go:20:7", 2: "c.go:23:2", 3: "c.go:30:1"} {
		if s := back.Site(id); s.String() != want {
			t.Errorf("site %d read ahead: %q, want %q", id, s.String(), want)
		}
	}
}

// TestSetRange checks the packing of ranges into Arg, bounds far from the
// value included: they move closer, never past the value.
func TestSetRange(t *testing.T) {
	tests := []struct {
		v    int64
		r    Range
		want Range
		ok   bool
	}{
		{5, Range{0, 9}, Range{0, 9}, true},
		{5, Range{6, 9}, Range{}, false},
		{math.MaxInt64, Range{0, math.MaxInt64}, Range{math.MaxInt64 - (1<<32 - 2), math.MaxInt64}, true},
		{0, Range{math.MinInt64 + 1, 1 << 40}, Range{-(1<<32 - 2), 1<<32 - 2}, true},
		{math.MinInt64, Range{math.MinInt64, 0}, Range{math.MinInt64, math.MinInt64 + (1<<32 - 2)}, true},
		{-1, Range{math.MinInt64, math.MaxInt64}, Range{math.MinInt64, math.MaxInt64}, true},
	}
	for _, tt := range tests {
		e := Event{Kind: KindRead, Value: uint64(tt.v), Flags: HasValue}
		if ok := e.SetRange(tt.r); ok != tt.ok {
			t.Errorf("SetRange(%d, %v) = %v, want %v", tt.v, tt.r, ok, tt.ok)
			continue
		}
		got, ok := e.Range()
		if ok != tt.ok || got != tt.want {
			t.Errorf("SetRange(%d, %v): Range() = %v, %v; want %v", tt.v, tt.r, got, ok, tt.want)
		}
	}
	if ok := (&Event{Kind: KindRead}).SetRange(Range{0, 0}); ok {
		t.Error("SetRange on a read without a value succeeded")
	}
}

func TestTextErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `trace.txt:1: empty trace: want the header "avtrace 1"`},
		{"g1 rd x\n", `trace.txt:1: missing header: want "avtrace 1" as the first line, found "g1"`},
		{"avtrace 2\n", `trace.txt:1: unsupported text trace version 2 (this avcheck reads version 1)`},
		{"avtrace\n", `trace.txt:1: header needs a version: want "avtrace 1"`},
		{"avtrace 1 x\n", `trace.txt:1: unexpected "x" at end of line`},
		{"avtrace 1\ng1 rdd x\n", `trace.txt:2: unknown event kind "rdd"`},
		{"avtrace 1\ng1\n", `trace.txt:2: event needs a kind after g1`},
		{"avtrace 1\ngx rd x\n", `trace.txt:2: expected an event (g<N> <kind> ...), a site or an obj line, found "gx"`},
		{"avtrace 1\ng99999999999 rd x\n", `trace.txt:2: bad goroutine "g99999999999": want g<N>`},
		{"avtrace 1\ng1 rd\n", `trace.txt:2: rd needs an object: a number such as 0x10 or a name`},
		{"avtrace 1\ng1 rd @3\n", `trace.txt:2: rd needs an object: a number such as 0x10 or a name`},
		{"avtrace 1\ng1 rd 0xzz\n", `trace.txt:2: bad object "0xzz": want a number such as 0x10 or a name`},
		{"avtrace 1\ng1 fork x\n", `trace.txt:2: fork needs the child goroutine as g<N>, found "x"`},
		{"avtrace 1\ng1 rd x foo\n", `trace.txt:2: unexpected "foo": want @SITE or KEY=VALUE`},
		{"avtrace 1\ng1 rd x color=red\n", `trace.txt:2: unknown attribute "color" (want region, br, v, range, seq, arg, msg, delta, ran or flags)`},
		{"avtrace 1\ng1 wr x v=1 range=0..2\n", `trace.txt:2: range= applies only to rd, not wr`},
		{"avtrace 1\ng1 rd x v=1 range=0-2\n", `trace.txt:2: bad value in "range=0-2": want range=LO..HI, either bound may be empty`},
		{"avtrace 1\ng1 rd x v=1 range=a..2\n", `trace.txt:2: bad value in "range=a..2"`},
		{"avtrace 1\ng1 rd x v=5 range=0..2\n", `trace.txt:2: range=0..2 needs v= within it`},
		{"avtrace 1\ng1 rd x range=0..2\n", `trace.txt:2: range=0..2 needs v= within it`},
		{"avtrace 1\ng1 rd x v=abc\n", `trace.txt:2: bad value in "v=abc"`},
		{"avtrace 1\ng1 rd x region=1.x\n", `trace.txt:2: bad value in "region=1.x"`},
		{"avtrace 1\ng1 rd x msg=1\n", `trace.txt:2: msg= applies only to send and recv, not rd`},
		{"avtrace 1\ng1 rd x delta=1\n", `trace.txt:2: delta= applies only to wgadd, not rd`},
		{"avtrace 1\ng1 once o ran=2\n", `trace.txt:2: bad value in "ran=2"`},
		{"avtrace 1\ng1 rd x @nowhere\n", `trace.txt:2: bad site "nowhere": want a site id or FILE:LINE[:COL]`},
		{"avtrace 1\nsite 0 a.go:1:1\n", `trace.txt:2: site needs an id from 1 to 1048575, found "0"`},
		{"avtrace 1\nsite 1 a.go\n", `trace.txt:2: site 1 needs a position FILE:LINE[:COL], found "a.go"`},
		{"avtrace 1\nsite 1 a.go:1:1\nsite 1 b.go:1:1\n", `trace.txt:3: site 1 declared twice`},
		{"avtrace 1\nobj x var a\n", `trace.txt:2: obj needs a numeric id such as 0x10, found "x"`},
		{"avtrace 1\nobj 0x1 thing a\n", `trace.txt:2: unknown object kind "thing" (want var, mutex, rwmutex, chan, waitgroup, cond, once or unknown)`},
		{"avtrace 1\nobj 0x1 var a b\n", `trace.txt:2: unexpected "b" after the object's name`},
		{"avtrace 1\nobj 0x1 chan c cap=x\n", `trace.txt:2: bad channel capacity "cap=x"`},
		{"avtrace 1\nobj 0x1 var a\nobj 0x1 var b\n", `trace.txt:3: object 0x1 declared twice (first as var "a")`},
		{"avtrace 1\ng1 rd x\nobj 0x1 var y\n", `trace.txt:3: object 0x1 declared twice (first as var "x")`},
		{"avtrace 1\nobj 0x1 var a\nobj 0x2 var a\ng1 rd a\n", `trace.txt:4: object name "a" names more than one object; use its id`},
		{"avtrace 1\nobj 0x1 var \"a\n", `trace.txt:2: unterminated quoted string`},
		{"avtrace 1\nobj 0x1 var \"a\"b\n", `trace.txt:2: quoted string must be followed by a space`},
		{"avtrace 1\nobj 0x1 var \"\\q\"\n", `trace.txt:2: bad quoted string "\q"`},
		{"avtrace 1\navtrace 1\n", `trace.txt:2: repeated header`},
	}
	for _, tt := range tests {
		_, err := readText(t, tt.in)
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

// TestTextStreaming checks that the reader returns events as it reads
// them and that its error is sticky.
func TestTextStreaming(t *testing.T) {
	r := NewTextReader(strings.NewReader("avtrace 1\ng1 rd x\ng1 bogus\ng1 rd x\n"), "t")
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || !errors.Is(err2, err1) {
		t.Errorf("errors %v, %v: want one sticky error", err1, err2)
	}
	r = NewTextReader(strings.NewReader("avtrace 1\n"), "t")
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("empty trace: %v, want io.EOF", err)
	}
}

func TestTextLongLine(t *testing.T) {
	src := "avtrace 1\nobj 0x1 var " + strings.Repeat("a", 100000) + "\ng1 rd 0x1\n"
	tr, err := readText(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Objects[1].Name); n != 100000 {
		t.Errorf("name of %d bytes, want 100000", n)
	}
	_, err = readText(t, "avtrace 1\n"+strings.Repeat("a", maxLine+10))
	if err == nil || !strings.Contains(err.Error(), "line longer than") {
		t.Errorf("got %v, want a line-length error", err)
	}
}
