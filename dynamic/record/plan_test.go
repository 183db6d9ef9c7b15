package record

import (
	"os"
	"path/filepath"
	"testing"
)

// An access whose source expression is longer than a message shows
// (regions.Short) is probed by its whole expression: an atomic operation
// on a package-level pointer with a long call, and a long field path.
func TestPlanLongExpressions(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod": "module example.invalid/long\n\ngo 1.22\n",
		"long.go": `package long

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

var fatalMessageOfTheProgramThatRan unsafe.Pointer

type Config struct{ theNumberOfEntriesTheCacheKeepsAtMost int }

type Cache struct {
	mu                        sync.Mutex
	configurationOfThisCache  *Config
}

func Store(m *string) {
	atomic.CompareAndSwapPointer(&fatalMessageOfTheProgramThatRan, nil, unsafe.Pointer(m))
}

func (c *Cache) Limit() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.configurationOfThisCache.theNumberOfEntriesTheCacheKeepsAtMost
}
`,
		"long_test.go": "package long\n\nimport \"testing\"\n\nfunc TestLong(t *testing.T) { s := \"x\"; Store(&s); _ = (&Cache{configurationOfThisCache: &Config{}}).Limit() }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := MakePlan(PlanOptions{Dir: dir, Pattern: "."})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range plan.Unprobed {
		if u.Reason == ReasonUnsupported {
			t.Errorf("not probed: %s: %s", u.Expr, u.Detail)
		}
	}
	want := map[string]bool{
		"CompareAndSwap fatalMessageOfTheProgramThatRan":                    false,
		" c.configurationOfThisCache.theNumberOfEntriesTheCacheKeepsAtMost": false,
	}
	for _, ps := range plan.Accesses {
		for _, p := range ps {
			if k := p.Atomic + " " + p.Expr; want[k] == false {
				if _, ok := want[k]; ok {
					want[k] = true
				}
			}
		}
	}
	for e, probed := range want {
		if !probed {
			t.Errorf("no probe of %s", e)
		}
	}
}
