// Package subtests runs subtests as table-driven tests do. Those that
// run one after another, and their parent before and after them, update
// one package-level counter in turn and never race; a parent's update
// after its parallel subtests were started happens before they go on.
// Two parallel subtests that split an update of another counter do race.
package subtests

import (
	"fmt"
	"sync"
	"testing"
)

var total int

func add(n int) {
	v := total
	total = v + n
}

func TestTable(t *testing.T) {
	add(1)
	for _, n := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			add(n)
		})
	}
	t.Run("named", named)
	add(1)
}

func named(t *testing.T) {
	add(5)
}

var (
	mu     sync.Mutex
	shared int
	late   int
)

func bump() {
	mu.Lock()
	v := shared
	mu.Unlock()
	mu.Lock()
	shared = v + 1
	mu.Unlock()
}

func TestParallelSubtests(t *testing.T) {
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bump()
			if name == "a" {
				v := late
				late = v * 2
			}
		})
	}
	late = 10
}
