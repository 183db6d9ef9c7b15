// Package lazyinit is lazy initialisation split over two critical
// sections: Lookup finds the table unset, loads it without the lock, and
// stores it. Two goroutines can both find it unset; the second store
// replaces the first goroutine's table, with what it added.
//
// Ground truth: a real atomicity violation on r.table (R-W-W: a lookup's
// check and store, interleaved by the other lookup's store).
package lazyinit

import "sync"

// Registry maps names to codes, loaded on first use.
type Registry struct {
	mu    sync.Mutex
	table map[string]int
	load  func(name string) map[string]int // reads the table from storage
}

// Lookup returns the code of name, loading the table on first use.
func (r *Registry) Lookup(name string) int {
	r.mu.Lock()
	t := r.table
	r.mu.Unlock()
	if t == nil {
		t = r.load(name)
		r.mu.Lock()
		r.table = t
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return t[name]
}
