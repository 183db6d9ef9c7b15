package record

import (
	"archive/zip"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
)

// depModule sets up testdata/record/depsync: its main module in a
// temporary directory, and the module it requires, example.invalid/gate,
// served by a module proxy in a directory (GOPROXY=file://) into a module
// cache of the test's own, or, with replace, as a directory that the main
// module's go.mod replaces it by. It returns the main module's directory.
func depsyncModule(t *testing.T, replace bool) string {
	t.Helper()
	src, err := filepath.Abs("../../testdata/record/depsync")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	main := filepath.Join(tmp, "main")
	copyDir(t, filepath.Join(src, "main"), main)
	if replace {
		gate := filepath.Join(tmp, "gate")
		copyDir(t, filepath.Join(src, "gate"), gate)
		appendFile(t, filepath.Join(main, "go.mod"), "\nreplace example.invalid/gate => "+gate+"\n")
		return main
	}
	proxy := filepath.Join(tmp, "proxy", "example.invalid", "gate", "@v")
	if err := os.MkdirAll(proxy, 0o700); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(src, "gate", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(proxy, "list"), "v1.0.0\n")
	writeFile(t, filepath.Join(proxy, "v1.0.0.info"), `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`)
	writeFile(t, filepath.Join(proxy, "v1.0.0.mod"), string(mod))
	zf, err := os.Create(filepath.Join(proxy, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	for _, name := range []string{"go.mod", "gate.go"} {
		data, err := os.ReadFile(filepath.Join(src, "gate", name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create("example.invalid/gate@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(tmp, "modcache")
	t.Setenv("GOPROXY", "file://"+filepath.Join(tmp, "proxy"))
	t.Setenv("GOMODCACHE", cache)
	t.Setenv("GOSUMDB", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Cleanup(func() {
		// The module cache's files are read-only: go clean removes them
		// before the temporary directory is.
		cmd := exec.Command("go", "clean", "-modcache")
		cmd.Dir = main
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go clean -modcache: %v\n%s", err, out)
		}
	})
	return main
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, name, data string) {
	t.Helper()
	old, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, name, string(old)+data)
}

// The synchronisation of another module's packages is recorded, whether
// the module is in the module cache (copied out of it) or a directory of
// the user's (overlaid): a hand-off through its channel, goroutines it
// starts and joins, its lock. With it, the tests of depsync have no
// finding; without it (the build of the packages under test alone), the
// same run has: the goroutines gate starts are then started by code that
// is not rewritten (trace.OutsideG forks them), so the findings they take
// part in stay predicted, with that reason, and the others are reported.
func TestInstrumentedOtherModules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace bool
	}{{"modcache", false}, {"replaced", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := depsyncModule(t, tc.replace)
			plan, err := MakePlan(PlanOptions{Dir: dir, Pattern: "."})
			if err != nil {
				t.Fatal(err)
			}
			bin, in, cleanup, err := BuildInstrumented(context.Background(), dir, ".", false, plan)
			t.Cleanup(cleanup)
			if err != nil {
				t.Fatal(err)
			}
			if om := in.OtherModules; !slices.Equal(om.Rewritten, []string{"example.invalid/gate"}) || om.Failed != "" || len(om.Left) > 0 {
				t.Fatalf("other modules %+v, want example.invalid/gate rewritten", om)
			}
			own := filepath.Join(filepath.Dir(in.Overlay), "own.overlay.json")
			got := recordDepsync(t, in, bin, dir)
			if len(got) > 0 {
				t.Errorf("findings with the other module's synchronisation recorded:\n%s", strings.Join(got, "\n"))
			}

			// The control: the same tests built without gate rewritten.
			binDir := t.TempDir()
			ownBin, err := goBuild(context.Background(), dir, ".", false, binDir, t.TempDir(), []string{"-overlay=" + own})
			if err != nil {
				t.Fatal(err)
			}
			// Each of the three orders is lost: the hand-off (result), the
			// goroutines gate starts and joins (total, shared), gate's lock
			// (n).
			vars, outside := map[string]bool{}, map[string]bool{}
			tr := recordInstrumentedOK(t, in, Options{Binary: ownBin, Dir: dir})
			for _, f := range predict.Predict(tr, predict.Options{All: true}).Findings {
				for _, v := range strings.Split(strings.ReplaceAll(f.Var, " ", ""), ",") {
					switch {
					case f.Dropped == "":
						vars[v] = true
					case strings.Contains(f.Dropped, "started by code that avcheck does not rewrite"):
						vars[v], outside[v] = true, true
					}
				}
			}
			if want := []string{"n", "result", "shared", "total"}; !slices.Equal(slices.Sorted(maps.Keys(vars)), want) {
				t.Errorf("without the other module's synchronisation, findings on %v, want on %v", slices.Sorted(maps.Keys(vars)), want)
			}
			if len(outside) == 0 {
				t.Error("without the other module's synchronisation, no finding names a goroutine it started")
			}
		})
	}
}

func recordDepsync(t *testing.T, in *Instrumented, bin, dir string) []string {
	t.Helper()
	return findings(recordInstrumentedOK(t, in, Options{Binary: bin, Dir: dir}))
}
