package record

import (
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// A second build of an unchanged package compiles nothing the first
// compiled: the overlay's files (the main module's go.mod, with its
// replaces of the runtime and of the copied module, and the rewritten
// files) are the same bytes, and the go command finds the packages it
// would compile, the runtime, the copied module's and the package under
// test, in its build cache.
func TestInstrumentedBuildCached(t *testing.T) {
	t.Setenv(EnvCache, t.TempDir())
	dir := depsyncModule(t, false)
	plan, err := MakePlan(PlanOptions{Dir: dir, Pattern: "."})
	if err != nil {
		t.Fatal(err)
	}
	_, in, cleanup, err := BuildInstrumented(context.Background(), dir, ".", false, plan)
	t.Cleanup(cleanup)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in.OtherModules.Rewritten, []string{"example.invalid/gate"}) {
		t.Fatalf("other modules rewritten: %v, want example.invalid/gate", in.OtherModules.Rewritten)
	}
	// The second build: the same steps, but for the go command's, which
	// the test runs with -x to see what it compiles.
	plan, err = MakePlan(PlanOptions{Dir: dir, Pattern: "."})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Instrument(plan, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first, second := overlayFiles(t, in.Overlay), overlayFiles(t, again.Overlay)
	if !slices.Equal(slices.Sorted(maps.Keys(first)), slices.Sorted(maps.Keys(second))) {
		t.Errorf("the builds overlay %v and %v", slices.Sorted(maps.Keys(first)), slices.Sorted(maps.Keys(second)))
	}
	for name, data := range first {
		if second[name] != data {
			t.Errorf("%s differs between the builds:\n%s\n---\n%s", name, data, second[name])
		}
	}

	cmd := exec.Command("go", "test", "-c", "-x", "-o", filepath.Join(t.TempDir(), "x.test"), "-overlay="+again.Overlay, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -c -x: %v\n%s", err, out)
	}
	for _, m := range regexp.MustCompile(`(?m)/compile .* -p (\S+) `).FindAllSubmatch(out, -1) {
		switch p := string(m[1]); p {
		case rtModule, "example.invalid/gate", "example.invalid/depsync":
			t.Errorf("the build after the same one compiles %s again", p)
		}
	}
}
