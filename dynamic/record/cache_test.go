package record

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"
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

// Two builds that write the same entry at once both get it, whole: the
// one renamed first, the other's copy removed.
func TestCachedDirConcurrent(t *testing.T) {
	root := t.TempDir()
	const n = 8
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			dirs[i], errs[i] = cachedDir(root, "entry", func(dir string) error {
				return os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n"), 0o600)
			})
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != filepath.Join(root, "entry") {
			t.Errorf("cachedDir = %q, %v; want %q", dirs[i], errs[i], filepath.Join(root, "entry"))
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "entry" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the cache holds %v, want [entry]", names)
	}
	if data, err := os.ReadFile(filepath.Join(root, "entry", "go.mod")); err != nil || string(data) != "module m\n" {
		t.Errorf("entry/go.mod = %q, %v", data, err)
	}
}

// Trimming removes the entries not used for trimAge and the temporary
// directories left behind, keeps the others, and runs at most once in
// trimEvery.
func TestTrimCache(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{
		"mod-old": trimAge + time.Hour, "mod-new": time.Hour, "tmp-old": trimAge + time.Hour, "tmp-new": time.Minute,
	} {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	left := func() []string {
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	trimCache(root, now)
	if got, want := left(), []string{"mod-new", "tmp-new", "trim.txt"}; !slices.Equal(got, want) {
		t.Errorf("after trimming, the cache holds %v, want %v", got, want)
	}
	stale := filepath.Join(root, "mod-stale")
	if err := os.Mkdir(stale, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(stale, now.Add(-2*trimAge), now.Add(-2*trimAge)); err != nil {
		t.Fatal(err)
	}
	trimCache(root, now.Add(time.Hour))
	if !slices.Contains(left(), "mod-stale") {
		t.Error("trimmed again within trimEvery")
	}
	trimCache(root, now.Add(trimEvery+time.Hour))
	if slices.Contains(left(), "mod-stale") {
		t.Error("not trimmed after trimEvery")
	}
}
