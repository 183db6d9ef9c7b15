package copies

import "testing"

// kept makes the test's slices escape to the heap, where the recorders
// record their elements as they record any shared memory (the
// instrumenting recorder does not record a goroutine's own stack).
var kept []any

func TestCopies(t *testing.T) {
	b := &Buf{data: []int{1, 2, 3}, big: make([]byte, 100), name: "avcheck"}
	b.SetFirst(7)
	if got := b.Snapshot(); got[0] != 7 || got[1] != 2 {
		t.Errorf("Snapshot() = %v, want [7 2]", got)
	}
	tail, src := []int{8, 9, 10}, make([]byte, 200)
	kept = append(kept, tail, src)
	b.SetTail(tail)
	if n := b.Fill(src); n != 100 {
		t.Errorf("Fill copied %d bytes, want 100", n)
	}
	if got := string(b.Name()); got != "avc" {
		t.Errorf("Name() = %q, want avc", got)
	}
	b.Rotate()
	data := Bytes("abc")
	kept = append(kept, data)
	if n := b.Put(data, 10); n != 3 {
		t.Errorf("Put copied %d bytes, want 3", n)
	}
	b.PutName()
	if got := string(b.big[:13]); got != "avcheck\x00\x00\x00abc" {
		t.Errorf("big starts with %q", got)
	}
	if b.data[0] != 8 || b.data[1] != 9 || b.data[2] != 9 {
		t.Errorf("after Rotate, data is %v, want [8 9 9]", b.data)
	}
}
