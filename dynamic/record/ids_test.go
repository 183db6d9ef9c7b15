package record

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// overlayFiles returns the files an overlay replaces, by the path they
// replace, with the contents of their replacements.
func overlayFiles(t *testing.T, overlay string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(overlay)
	if err != nil {
		t.Fatal(err)
	}
	var o struct{ Replace map[string]string }
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatal(err)
	}
	files := make(map[string]string)
	for from, to := range o.Replace {
		data, err := os.ReadFile(to)
		if err != nil {
			t.Fatal(err)
		}
		files[from] = string(data)
	}
	return files
}

// A file's probe ids are its own (ids.go): probes added to the package
// under test change the bytes of no other package rewritten with it,
// whose compilation the go build cache then reuses.
func TestInstrumentIDsPerFile(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"go.mod": "module example.invalid/ids\n\ngo 1.22\n",
		"b/b.go": `package b

import "sync"

type Counter struct {
	mu sync.Mutex
	n  int
}

func (c *Counter) Add() {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}
`,
		"a/a.go": `package a

import "example.invalid/ids/b"

func Run(c *b.Counter) { c.Add() }
`,
		"a/a_test.go": `package a

import (
	"testing"

	"example.invalid/ids/b"
)

func TestRun(t *testing.T) {
	var c b.Counter
	done := make(chan bool)
	go func() { Run(&c); done <- true }()
	Run(&c)
	<-done
}
`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), data)
	}
	rewritten := func() map[string]string {
		t.Helper()
		plan, err := MakePlan(PlanOptions{Dir: dir, Pattern: "./a"})
		if err != nil {
			t.Fatal(err)
		}
		in, err := Instrument(plan, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return overlayFiles(t, in.Overlay)
	}
	a, b := filepath.Join(dir, "a", "a.go"), filepath.Join(dir, "b", "b.go")
	before := rewritten()
	if before[b] == "" || before[a] != "" {
		t.Fatalf("files rewritten: %v, want b/b.go and not a/a.go", slices.Sorted(maps.Keys(before)))
	}
	// a gets probes of its own, a lock and an unlock, ahead of b's.
	writeFile(t, a, `package a

import (
	"sync"

	"example.invalid/ids/b"
)

var mu sync.Mutex

func Run(c *b.Counter) { mu.Lock(); mu.Unlock(); c.Add() }
`)
	after := rewritten()
	if after[a] == "" {
		t.Fatal("a/a.go is not rewritten after its change")
	}
	if after[b] != before[b] {
		t.Errorf("b/b.go's rewritten bytes changed with a/a.go's:\n%s\n---\n%s", before[b], after[b])
	}
}
