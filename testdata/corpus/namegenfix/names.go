// Package namegenfix is package namegen fixed as moby/moby#6025 fixed
// Docker's container naming race (moby/moby#2586): the registry's Reserve
// checks that the name is free and reserves it in one critical section,
// and fails if it is taken. After creating a container the daemon reads
// the name back for its log, a second call whose result only goes to the
// log.
//
// Ground truth: no atomicity violation.
package namegenfix

import (
	"errors"
	"sync"
)

// ErrNameTaken is returned when the proposed name is already reserved.
var ErrNameTaken = errors.New("namegenfix: name already in use")

// Registry maps container names to container IDs.
type Registry struct {
	mu    sync.Mutex
	names map[string]string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{names: make(map[string]string)}
}

// Reserve gives name to the container id, unless it is taken.
func (r *Registry) Reserve(name, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.names[name]; ok {
		return ErrNameTaken
	}
	r.names[name] = id
	return nil
}

// Get returns the ID of the container named name.
func (r *Registry) Get(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[name]
}

// Daemon creates containers.
type Daemon struct {
	Names    *Registry
	Generate func() string         // proposes a name
	Setup    func(id string) error // creates the container's root directory
	Logf     func(format string, args ...any)
}

// Create creates the container id and names it with the name the
// generator proposes, if that name is free.
func (d *Daemon) Create(id string) (string, error) {
	name := d.Generate()
	if err := d.Setup(id); err != nil {
		return "", err
	}
	if err := d.Names.Reserve(name, id); err != nil {
		return "", err
	}
	d.Logf("created %s as %s (registry: %s)", id, name, d.Names.Get(name))
	return name, nil
}
