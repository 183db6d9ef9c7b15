// Package blankread reads shared variables into the blank identifier,
// which the compiler compiles to no instruction at all unless avcheck
// run's build keeps the read.
package blankread

import (
	"sync"
	"testing"
)

var x, y int

type box struct{ n int }

func TestBlank(t *testing.T) {
	b := &box{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		x, y = 2, 3
		b.n = 4
	}()
	go func() {
		defer wg.Done()
		_ = x
		_, _ = y, b.n
		_ = // the value on a line of its own
			x
	}()
	wg.Wait()
}
