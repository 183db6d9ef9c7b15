package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/avcheck/avcheck/dynamic/report"
)

// Writing the default report after recording some packages keeps the
// findings the report held of the others, and their files, and drops
// those of the packages recorded again.
func TestMergeReport(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	finding := func(file string, line int) report.Finding {
		return report.Finding{Kind: "atomicity", Pattern: "R-W-W", Accesses: []report.Access{{File: file, Line: line, Op: "rd"}, {File: file, Line: line + 1, Op: "wr"}}}
	}
	old := &report.Document{Version: report.Version,
		Findings: []report.Finding{finding(filepath.Join(a, "a.go"), 3), finding(filepath.Join(b, "b.go"), 7), finding("b/c.go", 9)},
		Files:    []report.File{{File: filepath.Join(a, "a.go"), SHA256: "1"}, {File: filepath.Join(b, "b.go"), SHA256: "2"}, {File: "b/c.go", SHA256: "3"}},
	}
	path := filepath.Join(root, ".avcheck", "report.json")
	if _, err := writeReport(path, old); err != nil {
		t.Fatal(err)
	}
	now := &report.Document{Version: report.Version,
		Findings: []report.Finding{finding(filepath.Join(a, "a.go"), 20), finding(filepath.Join(b, "b.go"), 7)},
		Files:    []report.File{{File: filepath.Join(a, "a.go"), SHA256: "4"}, {File: filepath.Join(b, "b.go"), SHA256: "2"}},
	}
	got := mergeReport(path, root, now, []string{a})
	var lines []int
	for _, f := range got.Findings {
		lines = append(lines, f.Accesses[0].Line)
	}
	// a.go:3 is a's, recorded again; b.go:7 is in the new report already.
	if want := []int{20, 7, 9}; !slices.Equal(lines, want) {
		t.Errorf("findings at lines %v, want %v", lines, want)
	}
	var files []string
	for _, f := range got.Files {
		files = append(files, f.File+"="+f.SHA256)
	}
	if want := []string{filepath.Join(a, "a.go") + "=4", filepath.Join(b, "b.go") + "=2", "b/c.go=3"}; !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}

	// A report that cannot be read is replaced.
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mergeReport(path, root, now, []string{a}); got != now {
		t.Errorf("a broken report was merged")
	}
}
