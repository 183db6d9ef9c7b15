// Package namegen is modelled on Docker's container naming race
// (moby/moby#2586, fixed by moby/moby#6025): to name a new container the
// daemon asked the name registry whether the name was free and then, in
// a second call, reserved it. Two containers created at once can both
// find the name free and both reserve it: the second reservation
// overwrites the first, and two containers answer to one name.
//
// Ground truth: a real atomicity violation on r.names[name] (R-W-W: one
// creation's check and reservation, interleaved by the other creation's
// reservation).
package namegen

import (
	"errors"
	"sync"
)

// ErrNameTaken is returned when the proposed name is already reserved.
var ErrNameTaken = errors.New("namegen: name already in use")

// Registry maps container names to container IDs.
type Registry struct {
	mu    sync.Mutex
	names map[string]string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{names: make(map[string]string)}
}

// Taken reports whether name is reserved.
func (r *Registry) Taken(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.names[name]
	return ok
}

// Reserve gives name to the container id.
func (r *Registry) Reserve(name, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names[name] = id
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
}

// Create creates the container id and names it with the name the
// generator proposes, if that name is free: a check and a reservation,
// meant as one step.
func (d *Daemon) Create(id string) (string, error) {
	name := d.Generate()
	if d.Names.Taken(name) {
		return "", ErrNameTaken
	}
	if err := d.Setup(id); err != nil {
		return "", err
	}
	d.Names.Reserve(name, id)
	return name, nil
}
