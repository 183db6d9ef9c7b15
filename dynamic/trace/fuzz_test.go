package trace

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The fuzz targets check that no input makes a reader panic, that every
// rejection is one *FormatError, and that whatever a reader accepts
// survives writing and reading back.

func checkFormatError(t *testing.T, err error) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FormatError", err, err)
	}
}

// textOf renders a trace in the text format, the canonical form the
// round trips compare.
func textOf(t *testing.T, tr *Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTrace(NewTextWriter(&b), tr); err != nil {
		t.Fatalf("writing an accepted trace: %v", err)
	}
	return b.String()
}

// checkRoundTrips writes tr as text and as binary and reads both back.
func checkRoundTrips(t *testing.T, tr *Trace) {
	t.Helper()
	want := textOf(t, tr)
	back, err := ReadAll(NewTextReader(strings.NewReader(want), "rt.txt"))
	if err != nil {
		t.Fatalf("reading back the text %q: %v", want, err)
	}
	if got := textOf(t, back); got != want {
		t.Fatalf("text round trip:\n%s\nbecame\n%s", want, got)
	}
	var bin bytes.Buffer
	if err := WriteTrace(NewBinaryWriter(&bin), tr); err != nil {
		t.Fatalf("writing binary: %v", err)
	}
	back, err = ReadAll(NewBinaryReader(&bin, "rt.avt"))
	if err != nil {
		t.Fatalf("reading back the binary: %v", err)
	}
	if got := textOf(t, back); got != want {
		t.Fatalf("binary round trip:\n%s\nbecame\n%s", want, got)
	}
}

func FuzzText(f *testing.F) {
	f.Add("avtrace 1\nsite 3 counter.go:12:3 (*Counter).Inc\nobj 0x10 var c.n\nobj 0x20 mutex c.mu\nobj 0x30 chan ch cap=1\ng1 acq 0x20 @3\ng1 rd 0x10 @3 region=2.1 br=1 v=5\ng1 rel c.mu\n")
	f.Add("avtrace 1\ng1 fork g2\ng2 send ch\ng1 recv ch\ng1 once o\ng1 wgadd wg delta=-2 seq=9\ng1 rd \"a b\" @x.go:3 flags=4\n")
	f.Add("# c\navtrace 1\n\ng1 begin region=1.1 # x\ng1 finish region=1.1\ng1 end\n")
	f.Fuzz(func(t *testing.T, src string) {
		tr, err := ReadAll(NewTextReader(strings.NewReader(src), "fuzz.txt"))
		if err != nil {
			checkFormatError(t, err)
			return
		}
		checkRoundTrips(t, tr)
		_ = Validate(tr) // must not panic
	})
}

func FuzzBinary(f *testing.F) {
	for _, src := range []string{
		"avtrace 1\nsite 3 counter.go:12:3 (*Counter).Inc\nobj 0x10 var c.n\ng1 rd 0x10 @3 region=2.1 br=1 v=5\ng2 wr 0x10 seq=7 flags=4\n",
		"avtrace 1\ng1 fork g2\ng2 send 0x30 msg=1\ng1 recv 0x30 msg=1\ng1 wgadd 0x40 delta=-1\n",
	} {
		tr, err := ReadAll(NewTextReader(strings.NewReader(src), "seed"))
		if err != nil {
			f.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteTrace(NewBinaryWriter(&b), tr); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Add([]byte(binaryMagic + "\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadAll(NewBinaryReader(bytes.NewReader(data), "fuzz.avt"))
		if err != nil {
			checkFormatError(t, err)
			return
		}
		checkRoundTrips(t, tr)
		_ = Validate(tr)
	})
}

func FuzzSTD(f *testing.F) {
	f.Add("T0|fork(T1)|3\nT1|acq(L1)|11\nT1|r(V1)|12\nT1|w(V1)|5\nT1|rel(L1)|6\nT0|join(T1)|4\n")
	f.Add("T0|begin|1\nmain|w(counter)|0\nmain|acq(counter)|2\nT0|end|1\nT0|join(main)|0\n# c\n\n")
	f.Add("T0|r(V281474976710656)|1\nT2147483648|acq(L1)|4294967295\n")
	f.Add("T1|r(V1)|12\nT1|acq(V1)|0\nT1|acq(L1)|4294967296\nT123456789|fork(T999999999)|1\nT1|w(V1)|12 \nT1|rel(L1)|007\n")
	f.Add("T123456789|r")
	f.Add("T1|begin|4\nT1|r(V1)|2\nT1|begin|7\nT1|end|4\nT1|end|4\nT1|end|5\nT2|begin(x)|3\nT2|end|0099\nT1|begin|4294967296\nT1|begin|\nT1|end|1|2\n")
	f.Add("T1|begin|4294967295\nT1|w(V1)|1\nT3|end|1\nT1|end|12\n")
	f.Add("T1|r(V4294967416)|5\nT1|acq(L8589934712)|2\nT1|acq(V4294967416)|2\nT1|r(V18446744073709551615)|1\nT1|w(V99999999999999999999)|1\nT1|r(L8589934712)|3\nT1|fork(T2147483648)|1\n")
	f.Fuzz(func(t *testing.T, src string) {
		tr, err := ReadAll(NewSTDReader(strings.NewReader(src), "fuzz.std"))
		// The fast path for common lines agrees with the general parser.
		slow := NewSTDReader(strings.NewReader(src), "fuzz.std")
		slow.slowOnly = true
		trSlow, errSlow := ReadAll(slow)
		if (err == nil) != (errSlow == nil) || err != nil && err.Error() != errSlow.Error() {
			t.Fatalf("fast and slow parsers disagree: %v and %v", err, errSlow)
		}
		if err != nil {
			checkFormatError(t, err)
			return
		}
		if a, b := textOf(t, tr), textOf(t, trSlow); a != b {
			t.Fatalf("fast and slow parsers disagree:\n%s\n%s", a, b)
		}
		checkRoundTrips(t, tr)
		_ = Validate(tr)
		// Export, import with the table, export again: the same files.
		var s1, tb1 bytes.Buffer
		if err := WriteTrace(NewSTDWriter(&s1, &tb1), tr); err != nil {
			t.Fatalf("exporting: %v", err)
		}
		r := NewSTDReader(bytes.NewReader(s1.Bytes()), "rt.std")
		if err := r.ReadTable(bytes.NewReader(tb1.Bytes()), "rt.std.sites"); err != nil {
			t.Fatalf("reading the table back: %v\n%s", err, tb1.String())
		}
		back, err := ReadAll(r)
		if err != nil {
			t.Fatalf("reading the export back: %v\n%s", err, s1.String())
		}
		var s2, tb2 bytes.Buffer
		if err := WriteTrace(NewSTDWriter(&s2, &tb2), back); err != nil {
			t.Fatalf("exporting again: %v", err)
		}
		if s1.String() != s2.String() || tb1.String() != tb2.String() {
			t.Fatalf("STD round trip:\n%s%s\nbecame\n%s%s", s1.String(), tb1.String(), s2.String(), tb2.String())
		}
	})
}
