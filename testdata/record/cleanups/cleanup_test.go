// Package cleanups restores package-level settings in t.Cleanup, as test
// suites do. The testing package runs a test's cleanups after its
// function returned and its parallel subtests ended, and before the next
// test, or the parent's t.Run, goes on: none of the settings races. Two
// parallel subtests that split an update of a counter do race.
package cleanups

import (
	"fmt"
	"sync"
	"testing"
)

var key = "error"

func field() string { return key }

// A top-level test's cleanup restores key before the next test reads it.
func TestSetKey(t *testing.T) {
	old := key
	key = "err"
	t.Cleanup(func() {
		key = old
	})
	if field() != "err" {
		t.Fatal("key not set")
	}
}

func TestReadKey(t *testing.T) {
	if field() != "error" {
		t.Fatal("key not restored")
	}
}

var level = 1

// A subtest's cleanup restores level before its parent's t.Run returns.
func TestSubtestCleanup(t *testing.T) {
	t.Run("set", func(t *testing.T) {
		level = 2
		t.Cleanup(func() { level = 1 })
	})
	if level != 1 {
		t.Fatal("level not restored")
	}
}

var out = "stderr"

func write() string {
	return out + out
}

var (
	mu     sync.Mutex
	shared int
)

func bump() {
	mu.Lock()
	v := shared
	mu.Unlock()
	mu.Lock()
	shared = v + 1
	mu.Unlock()
}

// A parent's cleanup restores out once its parallel subtests, which read
// it, ended.
func TestParallelThenCleanup(t *testing.T) {
	old := out
	t.Cleanup(func() {
		out = old
	})
	out = "buffer"
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_ = write()
			bump()
		})
	}
}

// Tests whose parameter has no name, or is _, are ordered as the others.
func TestUnnamed(*testing.T) { key = "error" }

func TestBlank(_ *testing.T) { _ = field() }

// The examples run after the tests and their cleanups.
func Example() {
	fmt.Println(field())
	// Output: error
}
