package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScratchRewrite(t *testing.T) {
	root, _ := filepath.Abs("../..")
	plan, err := MakePlan(PlanOptions{Dir: root, Pattern: os.Getenv("PKG")})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range plan.Regions {
		if strings.Contains(r.Begin.File, os.Getenv("FILE")) {
			t.Logf("region %d %s %d-%d %s %v", r.ID, r.Kind, r.Begin.Line, r.EndLine, r.Func, r.Intent)
		}
	}
	dir := t.TempDir()
	if _, err := Instrument(plan, dir); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), "_"+os.Getenv("FILE")) {
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			t.Log("\n" + string(data))
		}
	}
}
