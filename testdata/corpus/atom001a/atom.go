// Package atom001a is atom001 fixed, as atom001a of the Fusion and
// AVFilter benchmarks (seed 001 section 6, Table 1; seed 000 Table 3): the
// decrement and the test for zero are one critical section.
//
// Ground truth: no atomicity violation.
package atom001a

import "sync"

// Object is a reference-counted cache entry.
type Object struct {
	mu    sync.Mutex
	refs  int
	frees int
}

// Release drops one reference and frees the object on the last one.
func (o *Object) Release() {
	o.mu.Lock()
	o.refs--
	last := o.refs == 0
	o.mu.Unlock()
	if last {
		o.free()
	}
}

func (o *Object) free() {
	o.mu.Lock()
	o.frees++
	o.mu.Unlock()
}
