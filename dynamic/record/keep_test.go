package record

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// A read into the blank identifier is recorded: the compiler emits no
// instruction for "_ = x" of a package-level variable, so the build
// rewrites it into a call that keeps the read, on the same line.
func TestRecordBlankReads(t *testing.T) {
	plan, bin := prepare(t, "blankread", false)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin, Args: []string{"-test.run=^TestBlank$"}})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" || oc.Unevaluated != 0 {
		t.Fatalf("outcome %+v", oc)
	}
	var got []string
	for _, e := range tr.Events {
		if e.Kind != trace.KindRead {
			continue
		}
		s := tr.Site(e.Site)
		got = append(got, fmt.Sprintf("%s:%d:%d %s", filepath.Base(s.File), s.Line, s.Col, tr.Object(e.Obj).Name))
	}
	slices.Sort(got) // the two goroutines may run in either order
	// b, each goroutine's copy of the pointer that its closure captured,
	// is on its own stack, and not recorded.
	want := []string{
		"blank_test.go:26:7 x",
		"blank_test.go:27:10 y",
		"blank_test.go:27:13 b.n",
		"blank_test.go:29:4 x",
	}
	if !slices.Equal(got, want) {
		t.Errorf("reads:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestKeptSource(t *testing.T) {
	src := "package p\n\nfunc f() {\n\t_ = x\n\t_, _ = a.b, c\n\t_ =\n\t\tx\n}\n"
	kf := &KeepFile{Func: "avcheckKeep1", Keeps: []Keep{
		{Start: strings.Index(src, "_ = x"), Head: strings.Index(src, "x\n"), End: strings.Index(src, "x\n") + 1},
		{Start: strings.Index(src, "_, _"), Head: strings.Index(src, "a.b"), End: strings.Index(src, ", c") + 3},
		{Start: strings.Index(src, "_ =\n"), Head: strings.LastIndex(src, "x"), End: strings.LastIndex(src, "x") + 1},
	}}
	got, err := keptSource([]byte(src), kf)
	if err != nil {
		t.Fatal(err)
	}
	want := "package p\n\nfunc f() {\n\tavcheckKeep1(x)\n\tavcheckKeep1(a.b, c)\n\tavcheckKeep1(\nx)\n}\n" +
		"\n\n// avcheckKeep1 keeps the reads of a blank assignment in avcheck run's build.\nfunc avcheckKeep1(...interface{}) {}\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := keptSource([]byte("package p"), kf); err == nil {
		t.Error("a source shorter than the plan's offsets: no error")
	}
}
