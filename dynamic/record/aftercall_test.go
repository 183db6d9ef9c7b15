package record

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// A write of the result of a call or a receive is recorded once the call
// or the receive returned, by both recorders: the writes that the call's
// receive (TestCall) or the receive itself (TestReceive) orders after the
// test's own are no race, and the unordered writes of TestRacy still are.
func TestAfterCall(t *testing.T) {
	want := []string{
		"predicted W-W x aftercall_test.go:50:wr aftercall_test.go:47:wr",
	}
	for _, recorder := range []string{"delve", "instrument"} {
		t.Run(recorder, func(t *testing.T) {
			tr := recordTests(t, recorder, "aftercall")
			if got := findings(tr); !slices.Equal(got, want) {
				t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// recordTests records the tests of testdata/record/name with recorder
// ("delve" or "instrument"), failing the test unless they ran to their
// end with a valid trace.
func recordTests(t *testing.T, recorder, name string) *trace.Trace {
	t.Helper()
	if recorder == "delve" {
		plan, bin := prepare(t, name, false)
		tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
		if !oc.Complete || oc.Status != 0 || oc.Invalid != "" {
			t.Fatalf("outcome %+v", oc)
		}
		if err := trace.Validate(tr); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	in, bin, root := prepareInstrumented(t, name, false)
	return recordInstrumentedOK(t, in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record", name)})
}
