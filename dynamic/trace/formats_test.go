package trace

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestFormatFixtures runs testdata/formats/*.txtar: a text trace, its STD
// export and the export's table. Export must give the STD sections, and
// importing them must give the text back.
func TestFormatFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/formats/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := make(map[string]string)
			for _, f := range a.Files {
				sec[f.Name] = string(f.Data)
			}
			tr, err := ReadAll(NewTextReader(strings.NewReader(sec["text"]), "text"))
			if err != nil {
				t.Fatal(err)
			}
			if err := Validate(tr); err != nil {
				t.Fatal(err)
			}
			var std, table bytes.Buffer
			if err := WriteTrace(NewSTDWriter(&std, &table), tr); err != nil {
				t.Fatal(err)
			}
			if std.String() != sec["std"] {
				t.Errorf("STD export:\n%s\nwant:\n%s", std.String(), sec["std"])
			}
			if table.String() != sec["std.sites"] {
				t.Errorf("table:\n%s\nwant:\n%s", table.String(), sec["std.sites"])
			}
			r := NewSTDReader(strings.NewReader(sec["std"]), "std")
			if err := r.ReadTable(strings.NewReader(sec["std.sites"]), "std.sites"); err != nil {
				t.Fatal(err)
			}
			back, err := ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if got := writeText(t, back); got != sec["text"] {
				t.Errorf("STD import:\n%s\nwant:\n%s", got, sec["text"])
			}
		})
	}
}
