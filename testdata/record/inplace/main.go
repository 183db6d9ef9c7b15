// Command inplace reads shared variables where no statement can be
// probed before the read: in the cases of a switch, tested one after
// another until one holds (the second would panic before the first has
// ruled out a nil pointer), and in an if's condition, through a variable
// that the if's own statement declares (not in a case that calls).
package main

import (
	"fmt"
	"sync"
)

type node struct{ n int }

type box struct {
	mu sync.Mutex
	p  *node
	q  *int
}

func (b *box) kind() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.p == nil:
		return "none"
	case b.p.n > 1:
		return "many"
	case *b.q > 0:
		return "one, counted"
	}
	return "one"
}

func (b *box) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.p; p.n > 0 {
		return 1
	}
	return 0
}

func (b *box) set(n int) {
	b.mu.Lock()
	b.p = &node{n: n}
	b.q = &n
	b.mu.Unlock()
}

// over is not called: its case calls limit, which could change b.p
// before the program reads b.p.n, so neither read is probed in place.
func (b *box) over(limit func() int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.p.n > limit():
		return true
	}
	return false
}

func main() {
	b := &box{}
	var wg sync.WaitGroup
	fmt.Println(b.kind())
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.set(2)
	}()
	wg.Wait()
	fmt.Println(b.kind(), b.count())
	b.set(1)
	fmt.Println(b.kind())
	b.mu.Lock()
	fmt.Println(ring[pick()].n > 0)
	b.mu.Unlock()
}

// ring is read through an index that a call gives: a probe before the
// statement would call pick a second time, in place it runs once.
var ring = []*node{{n: 1}}

func pick() int { return 0 }
