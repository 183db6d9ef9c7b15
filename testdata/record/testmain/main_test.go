// Package testmain has a TestMain that sets a package variable before
// it calls m.Run, which every test reads, and reads after m.Run what the
// tests wrote, without a lock: the testing package starts the tests once
// TestMain calls m.Run, and m.Run returns once they have returned,
// parallel ones included, so neither races. The two parallel tests
// still race with each other.
package testmain

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

type config struct{ step int }

var cfg *config

var (
	mu     sync.Mutex
	runs   int
	shared int
)

func TestMain(m *testing.M) {
	cfg = &config{step: 2}
	code := m.Run()
	if runs != 3 {
		fmt.Fprintf(os.Stderr, "%d tests counted, want 3\n", runs)
		code = 1
	}
	os.Exit(code)
}

func count() {
	mu.Lock()
	runs++
	mu.Unlock()
}

func TestStep(t *testing.T) {
	if cfg.step != 2 {
		t.Fatalf("step %d, want 2", cfg.step)
	}
	count()
}

func bump() {
	mu.Lock()
	v := shared
	mu.Unlock()
	mu.Lock()
	shared = v + cfg.step
	mu.Unlock()
}

func TestParallelA(t *testing.T) {
	t.Parallel()
	bump()
	count()
}

func TestParallelB(t *testing.T) {
	t.Parallel()
	bump()
	count()
}
