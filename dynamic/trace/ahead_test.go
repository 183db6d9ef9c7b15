package trace_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// TestReadAhead checks that ReadAhead returns the events and
// declarations of the reader it wraps, across many batches.
func TestReadAhead(t *testing.T) {
	cfg := tracegen.Config{Seed: 3, Events: 20000, Goroutines: 4, Locks: 4, Vars: 8, MaxNesting: 2, Chans: 2, Regions: 4}
	want, err := trace.ReadAll(tracegen.New(cfg))
	if err != nil {
		t.Fatal(err)
	}
	a := trace.ReadAhead(tracegen.New(cfg), trace.NewValidator(nil))
	defer a.Close()
	for i := 0; ; i++ {
		e, err := a.Next()
		if errors.Is(err, io.EOF) {
			if i != len(want.Events) {
				t.Fatalf("%d events, want %d", i, len(want.Events))
			}
			break
		}
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if e != want.Events[i] {
			t.Fatalf("event %d: got %v, want %v", i, e, want.Events[i])
		}
		if a.Site(e.Site) != want.Site(e.Site) {
			t.Fatalf("event %d: site %v, want %v", i, a.Site(e.Site), want.Site(e.Site))
		}
		if e.Kind != trace.KindFork && e.Kind != trace.KindEnd && a.Object(e.Obj) != want.Object(e.Obj) {
			t.Fatalf("event %d: object %v, want %v", i, a.Object(e.Obj), want.Object(e.Obj))
		}
	}
	if _, err := a.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the end: %v, want io.EOF", err)
	}
}

// TestReadAheadErrors checks that a malformed line and an impossible event
// come back in their place, after the events before them.
func TestReadAheadErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("avtrace 1\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "g1 wr x%d\n", i%7)
	}
	good := b.String()
	tests := []struct {
		name, tail, want string
		events           int
	}{
		{"malformed", "g1 rdd x\n", `trace:10002: unknown event kind "rdd"`, 10000},
		{"invalid", "g1 rel mu\n", "event 10000 (g1 rel mu): release of mu, which is not locked", 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := trace.NewTextReader(strings.NewReader(good+tt.tail+"g1 wr y\n"), "trace")
			a := trace.ReadAhead(r, trace.NewValidator(r))
			defer a.Close()
			n := 0
			var err error
			for {
				if _, err = a.Next(); err != nil {
					break
				}
				n++
			}
			if n != tt.events || err.Error() != tt.want {
				t.Errorf("after %d events: %v; want %d events, then %s", n, err, tt.events, tt.want)
			}
			if _, again := a.Next(); !errors.Is(again, err) {
				t.Errorf("then %v, want the same error", again)
			}
		})
	}
}

// TestReadAheadClose checks that Close stops a reader that is still
// ahead of its caller.
func TestReadAheadClose(t *testing.T) {
	a := trace.ReadAhead(tracegen.New(tracegen.Config{Seed: 1, Events: 1_000_000, Goroutines: 2, Locks: 1, Vars: 2}), nil)
	if _, err := a.Next(); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := a.Next(); err == nil {
		t.Error("Next after Close returned an event")
	}
}

// TestReadAheadReadAll checks that ReadAll over ReadAhead keeps the events
// and the declarations they use.
func TestReadAheadReadAll(t *testing.T) {
	cfg := tracegen.Config{Seed: 5, Events: 10000, Goroutines: 3, Locks: 3, Vars: 5, Chans: 1, Regions: 2}
	want, err := trace.ReadAll(tracegen.New(cfg))
	if err != nil {
		t.Fatal(err)
	}
	a := trace.ReadAhead(tracegen.New(cfg), nil)
	defer a.Close()
	got, err := trace.ReadAll(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != len(want.Events) {
		t.Fatalf("%d events, want %d", len(got.Events), len(want.Events))
	}
	for i, e := range got.Events {
		if e != want.Events[i] {
			t.Fatalf("event %d: got %v, want %v", i, e, want.Events[i])
		}
		if got.Site(e.Site) != want.Site(e.Site) || got.Object(e.Obj) != want.Object(e.Obj) {
			t.Fatalf("event %d: site %v object %v, want %v %v", i, got.Site(e.Site), got.Object(e.Obj), want.Site(e.Site), want.Object(e.Obj))
		}
	}
}

// TestReadAllSized checks that ReadAll through ReadAhead reads every
// event of a file in each format, and that, for a file larger than the
// sample it sizes its array from, the array ends up close to the events'
// number (one estimate, not repeated growth).
func TestReadAllSized(t *testing.T) {
	cfg := tracegen.Config{Seed: 5, Events: 600000, Goroutines: 4, Locks: 4, Vars: 8, MaxNesting: 2, Chans: 2, Regions: 4}
	want := tracegen.Trace(cfg)
	for _, f := range []trace.Format{trace.FormatNative, trace.FormatText, trace.FormatSTD} {
		t.Run(f.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t")
			if _, err := trace.WriteFile(path, f, tracegen.New(cfg)); err != nil {
				t.Fatal(err)
			}
			file, err := trace.Open(path, trace.FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			a := trace.ReadAhead(file, trace.NewValidator(file))
			defer a.Close()
			got, err := trace.ReadAll(a)
			if err != nil {
				t.Fatal(err)
			}
			if f == trace.FormatSTD {
				// STD adds the joins' events and numbers goroutines
				// its own way: compare the count and kinds.
				if len(got.Events) < len(want.Events) {
					t.Fatalf("%d events, want at least %d", len(got.Events), len(want.Events))
				}
			} else if !slices.Equal(got.Events, want.Events) {
				t.Fatalf("the events differ from the generated ones")
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			// Past twice the sample, the estimate is within its margin
			// (3%) and the file buffer's lookahead; growing by append
			// alone ends 8% above the count here.
			if n, c := len(got.Events), cap(got.Events); st.Size() > 8<<20 && c > n+n*6/100 {
				t.Errorf("%d events in an array of %d: %.3f times too large", n, c, float64(c)/float64(n))
			}
		})
	}
}

// TestReadAllFunc checks that ReadAllFunc hands every event over once, in
// order, in runs that are parts of the trace's array and still hold the
// same events at the end, through ReadAhead and through a plain reader;
// and that it hands over nothing past a malformed line.
func TestReadAllFunc(t *testing.T) {
	cfg := tracegen.Config{Seed: 6, Events: 30000, Goroutines: 4, Locks: 4, Vars: 8, MaxNesting: 2, Chans: 2, Regions: 4}
	want := tracegen.Trace(cfg)
	for name, r := range map[string]func() trace.Reader{
		"ahead": func() trace.Reader { return trace.ReadAhead(tracegen.New(cfg), nil) },
		"plain": func() trace.Reader { return tracegen.New(cfg) },
	} {
		var got []trace.Event
		var runs [][]trace.Event
		tr, err := trace.ReadAllFunc(r(), func(run []trace.Event) {
			if len(run) == 0 || len(run) > 4096 {
				t.Errorf("%s: a run of %d events", name, len(run))
			}
			got = append(got, run...)
			runs = append(runs, run)
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(got, want.Events) || !slices.Equal(tr.Events, want.Events) {
			t.Fatalf("%s: handed over %d events, read %d, want %d and the same", name, len(got), len(tr.Events), len(want.Events))
		}
		var again []trace.Event
		for _, run := range runs {
			again = append(again, run...)
		}
		if !slices.Equal(again, want.Events) {
			t.Errorf("%s: the runs changed after they were handed over", name)
		}
	}

	var b strings.Builder
	b.WriteString("avtrace 1\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "g1 wr x%d\n", i%7)
	}
	b.WriteString("g1 rd\n")
	r := trace.NewTextReader(strings.NewReader(b.String()), "t.txt")
	n := 0
	if _, err := trace.ReadAllFunc(r, func(run []trace.Event) { n += len(run) }); err == nil {
		t.Fatal("no error for a malformed last line")
	}
	if n > 10000 {
		t.Errorf("handed over %d events, more than the 10000 before the malformed line", n)
	}
}
