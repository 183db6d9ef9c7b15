package report

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// HashFiles lists each file the accesses name once, sorted, with its
// SHA-256 now; relative names are read from the directory given, and a
// file that cannot be read has an empty hash.
func TestHashFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "b.go")
	doc := &Document{Findings: []Finding{
		{Accesses: []Access{{File: "a.go"}, {File: abs}, {File: "a.go"}}},
		{Accesses: []Access{{File: "gone.go"}, {File: ""}}},
	}}
	doc.HashFiles(dir)
	want := []File{
		{File: abs, SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{File: "a.go", SHA256: "7b39baa38a2ec2b8d111bbbd8e448e80226477ab40105d9d2123d4dc18067438"},
		{File: "gone.go"},
	}
	if !reflect.DeepEqual(doc.Files, want) {
		t.Errorf("Files = %+v\nwant %+v", doc.Files, want)
	}
}
