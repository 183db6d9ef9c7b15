package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/avcheck/avcheck/dynamic/report"
)

// mergeReport returns doc with what the report already at path holds of
// other packages: its findings none of whose accesses lie in dirs (the
// directories of the packages just recorded) and that doc does not hold
// already, and the files they name. So recording one package after the
// whole module (avcheck test ./..., then avcheck run ./pkg) keeps the
// other packages' findings for go vet, and avreport still leaves out
// those in files changed since (their SHA-256). A report that cannot be
// read, or of another version, is replaced. Relative file names are
// taken from root.
func mergeReport(path, root string, doc *report.Document, dirs []string) *report.Document {
	data, err := os.ReadFile(path)
	if err != nil {
		return doc
	}
	var old report.Document
	if err := json.Unmarshal(data, &old); err != nil || old.Version != doc.Version {
		return doc
	}
	abs := func(f string) string {
		if filepath.IsAbs(f) {
			return filepath.Clean(f)
		}
		return filepath.Join(root, f)
	}
	recorded := func(f string) bool { return slices.Contains(dirs, filepath.Dir(abs(f))) }
	have := make(map[string]bool)
	for _, f := range doc.Findings {
		have[findingKey(f)] = true
	}
	merged := *doc
	merged.Findings = slices.Clone(doc.Findings)
	kept := make(map[string]bool)
	for _, f := range old.Findings {
		if have[findingKey(f)] || slices.ContainsFunc(f.Accesses, func(a report.Access) bool { return recorded(a.File) }) {
			continue
		}
		merged.Findings = append(merged.Findings, f)
		for _, a := range f.Accesses {
			kept[abs(a.File)] = true
		}
	}
	files := make(map[string]bool)
	merged.Files = slices.Clone(doc.Files)
	for _, f := range merged.Files {
		files[abs(f.File)] = true
	}
	for _, f := range old.Files {
		if kept[abs(f.File)] && !files[abs(f.File)] {
			files[abs(f.File)] = true
			merged.Files = append(merged.Files, f)
		}
	}
	slices.SortFunc(merged.Files, func(a, b report.File) int { return strings.Compare(a.File, b.File) })
	return &merged
}

// findingKey identifies a finding across reports: its kind, pattern
// and accesses' positions.
func findingKey(f report.Finding) string {
	var b strings.Builder
	b.WriteString(f.Kind + " " + f.Pattern)
	for _, a := range f.Accesses {
		fmt.Fprintf(&b, " %s:%d:%d:%s", a.File, a.Line, a.Col, a.Op)
	}
	return b.String()
}
