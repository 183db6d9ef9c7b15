package record

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The accesses that are not recorded are listed with why, those of the
// functions the run entered only: count's n before its goroutine's
// literal captures it is a variable of count alone (after, it is shared
// and recorded); never's m is not listed, since never is not called.
func TestRecordUnrecorded(t *testing.T) {
	plan, bin := prepare(t, "unrecorded", true)
	_, oc := record(t, context.Background(), plan, Options{Binary: bin})
	checkUnrecorded(t, plan, oc)
	if oc.ProbeHits == 0 {
		t.Error("no stop at a probed line")
	}
}

// TestInstrumentedUnrecorded is TestRecordUnrecorded with the
// instrumenting recorder, whose entry probes (avrt.Enter) tell which
// functions the run entered.
func TestInstrumentedUnrecorded(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "unrecorded", true)
	_, oc, err := RecordInstrumented(context.Background(), in, Options{Binary: bin, Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	checkUnrecorded(t, in.plan, oc)
}

func checkUnrecorded(t *testing.T, plan *Plan, oc Outcome) {
	t.Helper()
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
		t.Fatalf("outcome %+v", oc)
	}
	var got []string
	for _, u := range oc.Unrecorded {
		got = append(got, fmt.Sprintf("%s:%d:%d %s %s", filepath.Base(u.File), u.Line.Line, u.Col, u.Expr, u.Reason))
	}
	want := []string{
		"main.go:15:2 n not shared", // before the literal captures it
	}
	if !slices.Equal(got, want) {
		t.Errorf("not recorded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var planned []string
	for _, u := range plan.Unprobed {
		planned = append(planned, fmt.Sprintf("%d:%d", u.Line.Line, u.Col))
	}
	if !slices.Contains(planned, "28:2") {
		t.Errorf("never's m := 0 is not among the accesses the plan does not probe: %v", planned)
	}
}
