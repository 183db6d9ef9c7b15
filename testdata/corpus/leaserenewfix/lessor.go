// Package leaserenewfix is package leaserenew fixed as etcd-io/etcd#20590
// fixed etcd's lease renewal race: after the checkpoint, Renew checks
// again, in the critical section that refreshes the lease, that the lease
// still exists, and reports it not found if it was revoked meanwhile.
//
// Ground truth: no atomicity violation (the refresh re-checks the lease
// under the lock).
package leaserenewfix

import (
	"errors"
	"sync"
)

// ErrLeaseNotFound is returned for a lease that does not exist.
var ErrLeaseNotFound = errors.New("leaserenewfix: lease not found")

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
	defer le.mu.Unlock()
	if le.leaseMap[id] == nil {
		return -1, ErrLeaseNotFound
	}
	le.expiries[id] = le.now() + l.TTL
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
