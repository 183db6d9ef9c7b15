package record

import (
	"context"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// Function literals written on the go statements' line: the goroutine
// that runs the line makes none of the literals' accesses, and nothing
// is predicted (each literal writes its own element under the lock).
func TestRecordOneLine(t *testing.T) {
	plan, bin := prepare(t, "oneline", false)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		t.Fatalf("outcome %+v", oc)
	}
	if err := trace.Validate(tr); err != nil {
		t.Fatalf("trace: %v", err)
	}
	parents := map[trace.GoID]bool{}
	for _, e := range tr.Events {
		if e.Kind == trace.KindFork {
			parents[e.G] = true
		}
	}
	for _, e := range tr.Events {
		if !e.Kind.IsAccess() || !parents[e.G] {
			continue
		}
		if s := tr.Site(e.Site); strings.Contains(s.Func, "TestOneLine$") {
			t.Errorf("g%d, which runs TestOneLine, makes an access of the literal %s at %s", e.G, s.Func, s)
		}
	}
	if got := findings(tr); len(got) != 0 {
		t.Errorf("findings:\n%s\nwant none", strings.Join(got, "\n"))
	}
}
