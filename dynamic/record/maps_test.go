package record

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/dynamic/trace"
	"golang.org/x/tools/go/ssa"
)

// Every element of a map with integer, boolean or string keys is a
// variable of its own, identified by the map and the key's value: a miss
// and the store that inserts the element are accesses of one variable,
// another key or another map is another variable, and so is nothing else.
func TestRecordMapElems(t *testing.T) {
	plan, bin := prepare(t, "mapelems", true)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		t.Fatalf("outcome %+v", oc)
	}
	if err := trace.Validate(tr); err != nil {
		t.Fatalf("trace: %v", err)
	}
	// Not evaluated: the store of a 100-byte key (longer than the recorder
	// loads) and the store of a missing [2]int key (not a recorded key
	// type, so evaluated as before, when the element does not exist yet);
	// both still write the map's contents.
	if oc.Unevaluated != 2 {
		t.Errorf("%d accesses not evaluated, want 2", oc.Unevaluated)
	}
	const growLine = 63 // grow's loop, storing "0" to "99"
	var got []string
	ids := map[string]trace.ObjID{}
	names := map[trace.ObjID]string{}
	grown := map[trace.ObjID]bool{}
	contents := 0
	for _, e := range tr.Events {
		if !e.Kind.IsAccess() {
			continue
		}
		s := tr.Site(e.Site)
		name := tr.Object(e.Obj).Name
		if id, ok := ids[name]; ok && id != e.Obj {
			t.Errorf("%s is objects %#x and %#x", name, id, e.Obj)
		}
		if n, ok := names[e.Obj]; ok && n != name {
			t.Errorf("object %#x is %s and %s", e.Obj, n, name)
		}
		ids[name], names[e.Obj] = e.Obj, name
		// A channel's own variable (shadow.go) has an id of that range too.
		if elem := e.Obj >= mapElemBase; elem != (strings.HasSuffix(name, "]") && name != "s.pairs[p]" || strings.HasPrefix(name, "chan@")) {
			t.Errorf("%s: object %#x: a map element's id is %v", name, e.Obj, elem)
		}
		if s.Line == growLine {
			switch {
			case e.Kind != trace.KindWrite:
				t.Errorf("grow: %s %s", e.Kind, name)
			case name == "s.m[*]": // the contents of the same map, written through m
				contents++
			case strings.HasPrefix(name, `m["`):
				grown[e.Obj] = true
			default:
				t.Errorf("grow: %s %s", e.Kind, name)
			}
			continue
		}
		text := fmt.Sprintf("%s:%d %s %s", filepath.Base(s.File), s.Line, e.Kind, name)
		if e.Flags&trace.HasValue != 0 && e.Flags&trace.ValueIsAddr == 0 { // an address differs from run to run
			text += fmt.Sprintf("=%d", e.Value)
		}
		got = append(got, text)
	}
	if len(grown) != 100 || contents != 100 {
		t.Errorf("grow stored %d elements and wrote the contents %d times, want 100 and 100", len(grown), contents)
	}
	// The goroutine's reads of s, its closure's copy of the pointer on
	// its own stack, are not recorded.
	want := []string{
		"main.go:34 rd s.m",
		`main.go:34 rd s.m["a"]`, // missing: no value
		"main.go:35 rd s.m",
		`main.go:35 wr s.m["a"]`,
		"main.go:35 wr s.m[*]", // every element's write writes the contents
		"main.go:36 rd s.m",
		`main.go:36 rd s.m["a"]=1`,
		"main.go:37 rd s.m",
		`main.go:37 rd s.m["a"]=1`,
		`main.go:37 wr s.m["a"]`,
		"main.go:37 wr s.m[*]",
		"main.go:38 rd s.m",
		`main.go:38 rd s.m["b"]`,
		`main.go:38 wr s.m["b"]`,
		"main.go:38 wr s.m[*]",
		"main.go:39 rd s.other",
		`main.go:39 wr s.other["a"]`,
		"main.go:39 wr s.other[*]",
		"main.go:40 rd s.m",
		`main.go:40 wr s.m["b"]`, // delete
		"main.go:40 wr s.m[*]",
		"main.go:42 rd s.ids",
		"main.go:42 wr s.ids[-3]",
		"main.go:42 wr s.ids[*]",
		"main.go:43 rd s.ids",
		"main.go:43 rd s.ids[-2]",
		"main.go:43 wr s.ids[-2]",
		"main.go:43 wr s.ids[*]",
		"main.go:44 rd s.flags",
		"main.go:44 wr s.flags[false]",
		"main.go:44 wr s.flags[*]",
		"main.go:45 rd s.m",    // the long key's store is not evaluated,
		"main.go:45 wr s.m[*]", // but it writes the contents
		"main.go:47 rd s.pairs",
		"main.go:47 wr s.pairs[*]", // a missing [2]int key: the contents only
		"main.go:48 rd s.pairs",
		"main.go:48 rd s.pairs[p]=5", // an array key: the element's slot
		"main.go:50 rd s.m",          // range: the variable,
		"main.go:50 rd s.m[*]",       // and the contents
		"main.go:53 rd s.other",      // clear: the variable only
		"main.go:54 rd s.m[*]",       // len: the contents,
		"main.go:54 rd s.m",          // and the variable
		"main.go:60 rd s.m",
		`main.go:69 rd s.m["a"]=2`,      // after the map grew, through another variable
		"main.go:76 rd chan@main.go:76", // the send of the result reads its channel
	}
	if !slices.Equal(got, want) {
		t.Errorf("accesses:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, pair := range [][2]string{{`s.m["a"]`, `s.m["b"]`}, {`s.m["a"]`, `s.other["a"]`}, {"s.ids[-3]", "s.ids[-2]"}} {
		if a, b := ids[pair[0]], ids[pair[1]]; a == 0 || a == b {
			t.Errorf("%s is %#x and %s is %#x: want two objects", pair[0], a, pair[1], b)
		}
	}
}

func TestMapElement(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		m, key string
	}{
		{"c.m[key]", "c.m", "key"},
		{`s.m["a"]`, "s.m", `"a"`},
		{"(*pm)[n + 1]", "(*pm)", "n + 1"},
		{`delete(c.m, "k")`, "c.m", `"k"`},
		// Abbreviated by the analyzer, or not a Go expression: recorded
		// as before.
		{"c.entries[strings.ToLower(strings.TrimSpace(name...", "", ""},
		{"s.pairs[[2]int{…}]", "", ""},
		{"c.m", "", ""},
	} {
		a := &regions.Access{Expr: tc.expr, Instr: &ssa.MapUpdate{}}
		if m, key := mapElement(a); m != tc.m || key != tc.key {
			t.Errorf("mapElement(%q) = %q, %q, want %q, %q", tc.expr, m, key, tc.m, tc.key)
		}
	}
	// Not an element access: a field's store.
	if m, key := mapElement(&regions.Access{Expr: "c.m[key]", Instr: &ssa.Store{}}); m != "" || key != "" {
		t.Errorf("a store: %q, %q, want none", m, key)
	}
}
