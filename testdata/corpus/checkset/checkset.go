// Package checkset is a check-then-act across two locked calls: each
// method is atomic, but Claim checks the owner in one call and sets it in
// another, so two goroutines can both see no owner and both claim.
//
// Ground truth: a real atomicity violation on r.owner (R-W-W: a claim
// lost to the other's; the check of each is stale by its act).
package checkset

import "sync"

// Resource has one owner at a time.
type Resource struct {
	mu    sync.Mutex
	owner int
	// Prepare, if set, readies the resource for a new owner before the
	// claim takes effect.
	Prepare func(id int)
}

// Owner returns the current owner, 0 for none.
func (r *Resource) Owner() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.owner
}

// SetOwner makes id the owner.
func (r *Resource) SetOwner(id int) {
	r.mu.Lock()
	r.owner = id
	r.mu.Unlock()
}

// Claim makes id the owner if there is none, and reports whether it did.
func (r *Resource) Claim(id int) bool {
	if r.Owner() == 0 {
		if r.Prepare != nil {
			r.Prepare(id)
		}
		r.SetOwner(id)
		return true
	}
	return false
}
