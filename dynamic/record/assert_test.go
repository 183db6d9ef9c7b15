package record

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The regions the plan confirms, with their evidence, in programs whose
// reads are no evidence of intent (regions.Func.Evidence):
//   - assertrelease: Release's status check decides the give-back only
//     by panicking on its other branch, an assertion;
//   - pollloop: the poll loop's condition reads the clock (inside
//     time.Now, the standard library's own state) and a duration that
//     the goroutine captured and nothing writes, which no interleaving
//     changes.
//
// Neither function has a confirmed region; the critical sections and the
// appends that write back what they read still do.
func TestPlanNoEvidence(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pkg  string
		want []string
	}{
		{"assertrelease", []string{
			"Pool).Take lock 35-44 critical-section 0-0",
			"Pool).put lock 21-24 write-back 23-23",
			"Pool).put proximity 23-23 write-back 23-23",
		}},
		{"pollloop", []string{
			"Sink).Add lock 16-18 write-back 17-17",
			"Sink).Add proximity 17-17 write-back 17-17",
			"Sink).Len lock 22-25 critical-section 0-0",
		}},
	} {
		plan, err := MakePlan(PlanOptions{Dir: root, Pattern: "./testdata/record/" + tc.pkg})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range plan.Regions {
			if !r.Intent.Confirms() {
				continue
			}
			fn := strings.TrimPrefix(r.Func, "(*github.com/avcheck/avcheck/testdata/record/"+tc.pkg+".")
			got = append(got, fmt.Sprintf("%s %s %d-%d %s %d-%d", fn, r.Kind, r.Begin.Line, r.EndLine, r.Intent, r.Evidence[0].Line.Line, r.Evidence[1].Line.Line))
		}
		slices.Sort(got)
		got = slices.Compact(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: confirmed regions:\n%q\nwant:\n%q", tc.pkg, got, tc.want)
		}
	}
}
