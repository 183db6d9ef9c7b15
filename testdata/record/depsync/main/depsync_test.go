// Package depsync orders its goroutines' accesses only through package
// gate, of another module: recorded with gate's synchronisation, it has
// no atomicity violation and no race.
package depsync

import (
	"testing"

	"example.invalid/gate"
)

var (
	result int
	total  int
	shared int
)

// The goroutine's write is ordered before the test's read by the gate.
func TestHandOff(t *testing.T) {
	g := gate.New()
	go func() {
		result = 42
		g.Open()
	}()
	g.Wait()
	if result != 42 {
		t.Fatal(result)
	}
}

// The functions run on goroutines that gate starts and joins.
func TestRun(t *testing.T) {
	total = 1
	gate.Run(func() { shared = total + 1 })
	v := shared
	shared = v + total
}

// Each update holds the lock that gate's Do takes.
func TestLocked(t *testing.T) {
	var c gate.Counter
	n := 0
	gate.Run(
		func() { c.Do(func() { v := n; n = v + 1 }) },
		func() { c.Do(func() { v := n; n = v + 1 }) },
	)
	if n != 2 {
		t.Fatal(n)
	}
}
