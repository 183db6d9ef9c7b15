package record

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/dwarf/godwarf"
)

// shadowAccesses lists, for each send, close and atomic operation of the
// trace, the events of its goroutine around it that make its access
// (shadow.go), as "kind: events", one per operation, in trace order.
func shadowAccesses(tr *trace.Trace) []string {
	var out []string
	prev := map[trace.GoID][]int{} // each goroutine's events, by index
	for i, e := range tr.Events {
		prev[e.G] = append(prev[e.G], i)
	}
	name := func(e trace.Event) string {
		s := tr.Site(e.Site)
		return fmt.Sprintf("%s %s %s:%d", e.Kind, tr.Object(e.Obj).Name, filepath.Base(s.File), s.Line)
	}
	for _, g := range slices.Sorted(func(yield func(trace.GoID) bool) {
		for g := range prev {
			if !yield(g) {
				return
			}
		}
	}) {
		evs := prev[g]
		for k, i := range evs {
			e := tr.Events[i]
			var around []int
			switch e.Kind {
			case trace.KindSend, trace.KindClose:
				around = evs[max(k-1, 0):k]
			case trace.KindAtomicStore:
				// Its critical section: the acquire and the access
				// before it, the release after it.
				if k >= 2 && k+1 < len(evs) {
					around = []int{evs[k-2], evs[k-1], evs[k+1]}
				}
			case trace.KindAtomicLoad, trace.KindAtomicRMW:
				// The acquire before it, the access and the release
				// after it.
				if k >= 1 && k+2 < len(evs) {
					around = []int{evs[k-1], evs[k+1], evs[k+2]}
				}
			default:
				continue
			}
			var parts []string
			for _, j := range around {
				parts = append(parts, name(tr.Events[j]))
			}
			out = append(out, fmt.Sprintf("%s: %s", name(e), strings.Join(parts, "; ")))
		}
	}
	return out
}

// shadowCases are programs of testdata/record, with the lines of
// shadowAccesses that each must give: a send reads its channel's own
// variable and a close writes it, right before them; an atomic operation
// reads or writes its variable, and both are inside the variable's own
// critical section, the access after a load or read-modify-write, before
// a store. Both recorders must give them.
var shadowCases = []struct {
	name string
	want []string // each a suffix of a shadowAccesses line
}{
	{"chanclose", []string{
		"send chan@closing_test.go:11 closing_test.go:11: rd chan@closing_test.go:11 closing_test.go:11",
		"send chan@closing_test.go:11 closing_test.go:12: rd chan@closing_test.go:11 closing_test.go:12",
		"close chan@closing_test.go:11 closing_test.go:14: wr chan@closing_test.go:11 closing_test.go:14",
	}},
	{"atomics", []string{
		"armw s.hits atomics.go:17: acq atomic s.hits atomics.go:17; wr s.hits atomics.go:17; rel atomic s.hits atomics.go:17",
		"armw s.calls atomics.go:18: acq atomic s.calls atomics.go:18; wr s.calls atomics.go:18; rel atomic s.calls atomics.go:18",
		"astore s.ready atomics.go:25: acq atomic s.ready atomics.go:25; wr s.ready atomics.go:25; rel atomic s.ready atomics.go:25",
		"aload s.ready atomics.go:30: acq atomic s.ready atomics.go:30; rd s.ready atomics.go:30; rel atomic s.ready atomics.go:30",
		"aload s.hits atomics.go:39: acq atomic s.hits atomics.go:39; rd s.hits atomics.go:39; rel atomic s.hits atomics.go:39",
	}},
}

// checkShadow checks tr's shadow accesses against want.
func checkShadow(t *testing.T, tr *trace.Trace, want []string) {
	t.Helper()
	got := shadowAccesses(tr)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
	for _, l := range got {
		if strings.HasSuffix(l, ": ") {
			t.Errorf("an operation without its access: %q", l)
		}
	}
}

func TestRecordShadowAccesses(t *testing.T) {
	for _, tc := range shadowCases {
		t.Run(tc.name, func(t *testing.T) {
			plan, bin := prepare(t, tc.name, false)
			tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
			if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
				t.Fatalf("outcome %+v", oc)
			}
			if err := trace.Validate(tr); err != nil {
				t.Fatalf("trace: %v", err)
			}
			checkShadow(t, tr, tc.want)
		})
	}
}

// A struct or array value's leaves are its fields and elements, down to
// what is neither; a sync type's fields are left out.
func TestLeaves(t *testing.T) {
	u64 := &godwarf.UintType{BasicType: godwarf.BasicType{CommonType: godwarf.CommonType{ByteSize: 8, Name: "uint64"}}}
	mutex := &godwarf.StructType{CommonType: godwarf.CommonType{ByteSize: 8}, StructName: "sync.Mutex", Kind: "struct",
		Field: []*godwarf.StructField{{Name: "state", Type: u64, ByteOffset: 0}}}
	stats := &godwarf.StructType{CommonType: godwarf.CommonType{ByteSize: 16}, StructName: "p.Stats", Kind: "struct",
		Field: []*godwarf.StructField{{Name: "Writes", Type: u64}, {Name: "Reads", Type: u64, ByteOffset: 8}}}
	pair := &godwarf.ArrayType{CommonType: godwarf.CommonType{ByteSize: 32}, Type: stats, Count: 2}
	outer := &godwarf.StructType{CommonType: godwarf.CommonType{ByteSize: 48}, StructName: "p.Outer", Kind: "struct",
		Field: []*godwarf.StructField{{Name: "mu", Type: mutex}, {Name: "s", Type: pair, ByteOffset: 8}, {Name: "n", Type: u64, ByteOffset: 40}}}
	big := &godwarf.ArrayType{CommonType: godwarf.CommonType{ByteSize: 8 * 40}, Type: u64, Count: 40}
	for _, tc := range []struct {
		t    godwarf.Type
		want string
	}{
		{u64, ""},
		{stats, "8 .Reads"},
		{pair, "8 [0].Reads; 16 [1].Writes; 24 [1].Reads"},
		{outer, "8 .s[0].Writes; 16 .s[0].Reads; 24 .s[1].Writes; 32 .s[1].Reads; 40 .n"},
		{big, "8 [1]; 16 [2]; 24 [3]; 32 [4]; 40 [5]; 48 [6]; 56 [7]; 64 [8]; 72 [9]; 80 [10]; 88 [11]; 96 [12]; 104 [13]; 112 [14]; 120 [15]"},
	} {
		var parts []string
		for _, l := range leaves(tc.t) {
			parts = append(parts, fmt.Sprintf("%d %s", l.off, l.name))
		}
		if got := strings.Join(parts, "; "); got != tc.want {
			t.Errorf("leaves(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
