// Package rwlayer is modelled on Moby's read-write layer race
// (moby/moby#39209, "layer: fix same rw layer races"): ReleaseRWLayer
// dropped a reference to a mount and, seeing none left, released the
// store's lock, removed the mount's storage through the graph driver and
// then, in a later critical section, deleted the mount from the store's
// map. A GetRWLayer in between still finds the mount, takes a reference
// to it and returns a layer whose storage is gone.
//
// Ground truth: a real atomicity violation on m.refs and ls.mounts[name]
// (the release's last-reference check and its deletion of the mount,
// interleaved by GetRWLayer's lookup and new reference).
package rwlayer

import (
	"errors"
	"sync"
)

// ErrMountDoesNotExist is returned for a name that has no mount.
var ErrMountDoesNotExist = errors.New("rwlayer: mount does not exist")

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
	m := ls.mounts[name]
	if m == nil {
		ls.mu.Unlock()
		return ErrMountDoesNotExist
	}
	m.refs--
	last := m.refs == 0
	ls.mu.Unlock()
	if !last {
		return nil
	}
	if err := ls.driver.Remove(name); err != nil {
		return err
	}
	ls.mu.Lock()
	delete(ls.mounts, name)
	ls.mu.Unlock()
	return nil
}
