package record

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// A copy reads the elements of its source and writes those of its
// destination, each the variable an index of it names, as many as the
// shorter slice has, and at most avrt.MaxElems of them; a string's bytes
// are not read, a parameter named len changes nothing, and a copy whose
// argument calls a function is not probed (the Delve recorder cannot
// evaluate it either).
func TestRecordCopies(t *testing.T) {
	want := []string{
		"copies.go:18 wr data+0",
		"copies.go:26 rd data+0",
		"copies.go:26 rd data+1",
		"copies.go:32 rd v[*] ×2",
		"copies.go:32 wr data+1",
		"copies.go:32 wr data+2",
		"copies.go:39 rd src[*] ×16",
		"copies.go:39 wr b.big[*] ×16",
		"copies.go:65 rd data[*] ×3",
		"copies.go:65 wr b.big[*] ×3",
		"copies.go:70 wr b.big[*] ×7",
	}
	check := func(t *testing.T, tr *trace.Trace) {
		var data trace.ObjID
		for _, e := range tr.Events {
			if e.Kind == trace.KindWrite && tr.Site(e.Site).Line == 18 {
				data = e.Obj
			}
		}
		var got []string
		count := map[string]int{}
		for _, e := range tr.Events {
			s := tr.Site(e.Site)
			if !e.Kind.IsAccess() || filepath.Base(s.File) != "copies.go" {
				continue
			}
			at := fmt.Sprintf("%s:%d %s", filepath.Base(s.File), s.Line, e.Kind)
			switch name := tr.Object(e.Obj).Name; {
			case data <= e.Obj && e.Obj < data+3*8:
				got = append(got, fmt.Sprintf("%s data+%d", at, (e.Obj-data)/8))
			case strings.Contains(name, "["):
				count[at+" "+name]++
			}
		}
		for at, n := range count {
			got = append(got, fmt.Sprintf("%s ×%d", at, n))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("element accesses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	withBothRecorders(t, "copies", check, func(t *testing.T, in *Instrumented) {
		var notProbed []string
		for _, n := range in.NotProbed {
			notProbed = append(notProbed, fmt.Sprintf("%s:%d %s write=%v: %s", filepath.Base(n.File), n.Line.Line, n.Expr, n.Write, n.Why))
		}
		// The plan has no write at line 55: the analyzer does not know
		// what b.Next() returns.
		wantNot := []string{"copies.go:55 copy(b.Next(), b.data[1:]) write=false: " + callsWhy}
		if !slices.Equal(notProbed, wantNot) {
			t.Errorf("not probed:\n%s\nwant:\n%s", strings.Join(notProbed, "\n"), strings.Join(wantNot, "\n"))
		}
	})
}
