package record

import (
	"testing"

	"github.com/avcheck/avcheck/dynamic/record/avrt"
)

// An allocation renews the ids of the addresses used inside it, and only
// those, whether it spans a page, several, or more pages than are in use;
// an address renewed and not used since is not renewed again.
func TestVarIDs(t *testing.T) {
	const p = 0xc000010000
	vi := newVarIDs()
	read := func(a uint64) uint64 { return vi.of(avrt.Event{Kind: avrt.KindRead, Obj: a}) }
	made := func(a, size uint64) { vi.of(avrt.Event{Kind: avrt.KindMade, Obj: a, Arg: size}) }
	for _, tc := range []struct {
		step string
		got  uint64
		want uint64
	}{
		{"first use", read(p + 8), p + 8},
		{"next use", read(p + 8), p + 8},
		{"a field on the next page", read(p + 4096), p + 4096},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: id %#x, want %#x", tc.step, tc.got, tc.want)
		}
	}
	made(p+16, 8) // past p+8
	if got := read(p + 8); got != p+8 {
		t.Errorf("after an allocation next to it: id %#x, want %#x", got, uint64(p+8))
	}
	made(p, 8192) // over both pages
	made(p, 16)   // p+8 not used since: no new generation
	for _, a := range []uint64{p + 8, p + 4096} {
		if got, want := read(a), a|1<<48; got != want {
			t.Errorf("after an allocation over %#x: id %#x, want %#x", a, got, want)
		}
	}
	made(p-1<<30, 2<<30) // more pages than in use
	if got, want := read(p+8), uint64(p+8)|2<<48; got != want {
		t.Errorf("after a large allocation: id %#x, want %#x", got, want)
	}
	if got := vi.of(avrt.Event{Kind: avrt.KindSend, Obj: p + 8}); got != p+8 {
		t.Errorf("a channel's id %#x, want its address %#x (chanIDs numbers channels)", got, uint64(p+8))
	}
}
