package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func encodeBinary(t *testing.T, tr *Trace) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTrace(NewBinaryWriter(&b), tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBinaryRoundTrip(t *testing.T) {
	src := `avtrace 1
site 3 counter.go:12:3 (*Counter).Inc
site 1000 other.go:1:1
obj 0x10 var c.n
obj 0x20 mutex c.mu
obj 0x30 chan ch cap=1
g1 fork g2
g1 acq 0x20 @3
g1 rd 0x10 @3 region=2.1 br=1 v=5
g1 rd 0x10 @3 v=5 range=..6
g1 rd 0x10 @3 v=2 range=1.. flags=4
g1 rel 0x20 @1000
g2 send 0x30 msg=1 seq=100
g1 recv 0x30 msg=1 seq=50
g2 wgadd 0x40 delta=-3
g4294967295 wr 0xffffffffffffffff v=18446744073709551615 region=4294967295.18446744073709551615 br=4294967295
g0 end
`
	tr, err := readText(t, src)
	if err != nil {
		t.Fatal(err)
	}
	tr.Events[0].Flags |= 0x80 // a flag this version does not know survives
	bin := encodeBinary(t, tr)
	got, err := ReadAll(NewBinaryReader(bytes.NewReader(bin), "t.avt"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := writeText(t, tr), writeText(t, got); a != b {
		t.Errorf("round trip changed the trace:\n%s\nto\n%s", a, b)
	}
	if got.Events[0].Flags != tr.Events[0].Flags {
		t.Errorf("flags %#x, want %#x", got.Events[0].Flags, tr.Events[0].Flags)
	}
	// A reader that is fed one byte at a time sees the same trace.
	got2, err := ReadAll(NewBinaryReader(&oneByteReader{bin}, "t.avt"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := writeText(t, tr), writeText(t, got2); a != b {
		t.Errorf("byte-at-a-time read changed the trace:\n%s", b)
	}
}

type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

func TestBinaryCompact(t *testing.T) {
	// A read by the previous goroutine of the previous object, with no
	// other fields, costs two bytes; the first read pays for g1 and 0x10.
	tr, err := readText(t, "avtrace 1\ng1 rd 0x10\ng1 rd 0x10\ng1 rd 0x10\n")
	if err != nil {
		t.Fatal(err)
	}
	bin := encodeBinary(t, tr)
	if n := len(bin) - len(binaryMagic) - 1; n != 4+2+2 {
		t.Errorf("three reads take %d bytes: % x", n, bin)
	}
}

func TestBinaryErrors(t *testing.T) {
	hdr := binaryMagic + "\x01"
	ev := func(b ...byte) string { return hdr + string(b) }
	tests := []struct{ in, want string }{
		{"", "t.avt: byte 0: not a native avcheck trace (bad magic)"},
		{"avtrace 1\n", "t.avt: byte 0: not a native avcheck trace (bad magic)"},
		{binaryMagic, "t.avt: byte 5: truncated varint"},
		{binaryMagic + "\x02", "t.avt: byte 5: unsupported native trace version 2 (this avcheck reads version 1)"},
		{ev(0), "t.avt: byte 6: unknown event kind 0"},
		{ev(63, 0), "t.avt: byte 6: unknown event kind 63"},
		{ev(byte(KindRead)), "t.avt: byte 6: truncated event"},
		{ev(byte(KindRead)|tagFlags, 0), "t.avt: byte 6: truncated event"},
		{ev(byte(KindRead), hasObj), "t.avt: byte 8: truncated varint"},
		{ev(byte(KindRead), hasObj, 0x80), "t.avt: byte 8: truncated varint"},
		{ev(byte(KindRead), hasObj, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "t.avt: byte 8: varint overflows 64 bits"},
		{ev(byte(KindRead), hasG, 0x80, 0x80, 0x80, 0x80, 0x10), "t.avt: byte 6: goroutine id 4294967296 out of range"},
		{ev(byte(KindFork), hasObj, 2), "t.avt: byte 6: fork event carries an object"},
		{ev(0x90), "t.avt: byte 6: unknown record tag 0x90"},
		{ev(tagSite, 0), "t.avt: byte 6: site id 0 out of range 1..1048575"},
		{ev(tagSite, 1, 5, 'a'), "t.avt: byte 9: truncated string"},
		{ev(tagSite, 1, 0x81, 0x80, 0x04), "t.avt: byte 11: string of 65537 bytes is longer than 65536"},
		{ev(tagSite, 1, 1, 'a', 1, 1, 0, tagSite, 1, 1, 'b', 1, 1, 0), "t.avt: byte 13: site 1 declared twice"},
		{ev(tagObject, 1, 99), "t.avt: byte 6: unknown object kind 99"},
		{ev(tagObject, 1, 1, 0, 0, tagObject, 1, 1, 0, 0), "t.avt: byte 11: object 0x1 declared twice"},
		{ev(tagObject, 1, 1, 0), "t.avt: byte 10: truncated varint"},
	}
	for _, tt := range tests {
		_, err := ReadAll(NewBinaryReader(strings.NewReader(tt.in), "t.avt"))
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("% x: got %v, want a *FormatError", tt.in, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("% x:\n got %s\nwant %s", tt.in, err, tt.want)
		}
	}
}

func TestBinaryEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := NewBinaryWriter(&b).Flush(); err != nil {
		t.Fatal(err)
	}
	want := binaryMagic + string(binary.AppendUvarint(nil, BinaryVersion))
	if b.String() != want {
		t.Errorf("empty trace is % x, want % x", b.String(), want)
	}
	if _, err := NewBinaryReader(&b, "e").Next(); !errors.Is(err, io.EOF) {
		t.Errorf("reading it: %v, want io.EOF", err)
	}
}
