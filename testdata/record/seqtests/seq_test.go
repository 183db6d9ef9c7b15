// Package seqtests has two tests that update one package-level counter,
// each in its turn: go test runs them one after the other, so they never
// race. A third test, parallel with a fourth, does race with it.
package seqtests

import (
	"sync"
	"testing"
)

var total int

func add(n int) {
	v := total
	total = v + n
}

func TestFirst(t *testing.T) {
	add(1)
}

func TestSecond(t *testing.T) {
	add(2)
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

func TestParallelA(t *testing.T) {
	t.Parallel()
	bump()
}

func TestParallelB(t *testing.T) {
	t.Parallel()
	bump()
}
