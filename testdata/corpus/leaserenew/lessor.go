// Package leaserenew is modelled on etcd's lease renewal race
// (etcd-io/etcd#20590, "Re-check that the lease still exists during the
// renew process"): Renew looked the lease up under the lessor's lock,
// released it to checkpoint the lease, and then took the lock again to
// refresh the lease's expiry and queue it for expiry, without checking
// that the lease was still there. A Revoke in between removes the lease,
// and Renew still refreshes it and reports it alive with its TTL.
//
// Ground truth: a real atomicity violation on le.leaseMap[id] and
// le.expiries[id] (Renew's lookup and its refresh, interleaved by
// Revoke's removal of both).
package leaserenew

import (
	"errors"
	"sync"
)

// ErrLeaseNotFound is returned for a lease that does not exist.
var ErrLeaseNotFound = errors.New("leaserenew: lease not found")

// Lease is a lease granted for TTL seconds.
type Lease struct {
	ID  int64
	TTL int64
}

// Lessor grants, renews and revokes leases.
type Lessor struct {
	mu         sync.RWMutex
	leaseMap   map[int64]*Lease
	expiries   map[int64]int64 // the expiry queue: when each lease expires
	now        func() int64
	checkpoint func(id int64) // persists the lease's remaining TTL
}

// New returns a lessor with no leases.
func New(now func() int64, checkpoint func(id int64)) *Lessor {
	return &Lessor{
		leaseMap:   make(map[int64]*Lease),
		expiries:   make(map[int64]int64),
		now:        now,
		checkpoint: checkpoint,
	}
}

// Grant grants the lease id for ttl seconds.
func (le *Lessor) Grant(id, ttl int64) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.leaseMap[id] = &Lease{ID: id, TTL: ttl}
	le.expiries[id] = le.now() + ttl
}

// Renew extends the lease id by its TTL and returns the TTL.
func (le *Lessor) Renew(id int64) (int64, error) {
	le.mu.RLock()
	l := le.leaseMap[id]
	le.mu.RUnlock()
	if l == nil {
		return -1, ErrLeaseNotFound
	}
	le.checkpoint(id)
	le.mu.Lock()
	le.expiries[id] = le.now() + l.TTL
	le.mu.Unlock()
	return l.TTL, nil
}

// Revoke removes the lease id.
func (le *Lessor) Revoke(id int64) error {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.leaseMap[id] == nil {
		return ErrLeaseNotFound
	}
	delete(le.leaseMap, id)
	delete(le.expiries, id)
	return nil
}
