// Package atom001 follows atom001 of the Fusion and AVFilter benchmarks
// (seed 001 section 6, Table 1; seed 000 Table 3), which mimics an Apache
// web server bug pattern: a shared object's reference count is decremented
// and then tested for zero, and the goroutine that sees zero frees the
// object. The decrement and the test are two critical sections, so two
// releases can both decrement before either tests: both see zero and the
// object is freed twice.
//
// Ground truth: a real atomicity violation on o.refs (W-W-R: a release's
// decrement and test, interleaved by the other release's decrement).
package atom001

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
	o.mu.Unlock()
	o.mu.Lock()
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
