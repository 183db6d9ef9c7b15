// Package rwlayerfix is package rwlayer fixed: ReleaseRWLayer holds the
// store's lock from its last-reference check through the removal of the
// storage and the deletion of the mount, so no GetRWLayer can come in
// between. (moby/moby#39209 serialises the operations on one layer with a
// lock per layer name instead, which keeps other layers available during
// a removal; the atomicity is the same.)
//
// Ground truth: no atomicity violation.
package rwlayerfix

import (
	"errors"
	"sync"
)

// ErrMountDoesNotExist is returned for a name that has no mount.
var ErrMountDoesNotExist = errors.New("rwlayerfix: mount does not exist")

// Driver is a graph driver.
type Driver interface {
	Remove(id string) error
}

// MountedLayer is a read-write layer.
type MountedLayer struct {
	name string
	refs int // guarded by the store's mu
}

// Store holds the read-write layers by name.
type Store struct {
	mu     sync.Mutex
	mounts map[string]*MountedLayer
	driver Driver
}

// New returns a store whose layers live in driver.
func New(driver Driver) *Store {
	return &Store{mounts: make(map[string]*MountedLayer), driver: driver}
}

// CreateRWLayer creates the layer name, with one reference.
func (ls *Store) CreateRWLayer(name string) *MountedLayer {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	m := &MountedLayer{name: name, refs: 1}
	ls.mounts[name] = m
	return m
}

// GetRWLayer returns the layer name, with a new reference.
func (ls *Store) GetRWLayer(name string) (*MountedLayer, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	m := ls.mounts[name]
	if m == nil {
		return nil, ErrMountDoesNotExist
	}
	m.refs++
	return m, nil
}

// ReleaseRWLayer drops a reference to the layer name and removes the
// layer when it was the last.
func (ls *Store) ReleaseRWLayer(name string) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	m := ls.mounts[name]
	if m == nil {
		return ErrMountDoesNotExist
	}
	m.refs--
	if m.refs > 0 {
		return nil
	}
	if err := ls.driver.Remove(name); err != nil {
		return err
	}
	delete(ls.mounts, name)
	return nil
}
