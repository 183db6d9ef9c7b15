// Package initorder sets a package variable in init, after a call of a
// function that records an event, which happens before every test, and has an example, which the testing package runs
// on the main goroutine once the tests are done, write a registry that a
// test reads without its lock. Neither gives a finding.
package initorder

import (
	"fmt"
	"sync"
	"testing"
)

var pause []int

func init() {
	setup()
	pause = make([]int, 4)
}

// setup is called by init: its events (the lock's) are initialisation
// too, and so is what init does after it.
func setup() {
	reg.Lock()
	reg.Unlock()
}

var reg = struct {
	sync.Mutex
	m map[int]bool
}{m: map[int]bool{}}

func add(k int) {
	reg.Lock()
	defer reg.Unlock()
	reg.m[k] = true
}

func TestInit(t *testing.T) {
	if len(pause) != 4 {
		t.Fatal("init did not run")
	}
}

func TestRegistry(t *testing.T) {
	n := len(reg.m)
	add(1)
	if len(reg.m) != n+1 {
		t.Errorf("%d entries, want %d", len(reg.m), n+1)
	}
}

func Example() {
	add(2)
	fmt.Println(len(reg.m))
	// Output: 2
}
