// Package podstore is modelled on the thread-safe store behind client-go's
// informer caches (k8s.io/client-go/tools/cache, threadSafeMap behind the
// Store interface): every method takes the store's RWMutex (the read lock
// for Get and List) and releases it with defer. The informer applies the
// watch events it receives one at a time (an Add, then an Update, then a
// Delete), and a controller, through the Store interface, gets an object
// and lists them all for its logs, one call after the other.
//
// Ground truth: no atomicity violation (each event and each read is one
// step; no goroutine means two of its calls as one).
package podstore

import "sync"

// Pod is the part of a pod the store's users look at.
type Pod struct {
	Name  string
	Phase string
}

// Store is a thread-safe store of pods by key.
type Store interface {
	Add(key string, p *Pod)
	Update(key string, p *Pod)
	Delete(key string)
	Get(key string) (*Pod, bool)
	List() []*Pod
}

type threadSafeMap struct {
	lock  sync.RWMutex
	items map[string]*Pod
}

// NewStore returns an empty store.
func NewStore() Store {
	return &threadSafeMap{items: make(map[string]*Pod)}
}

// Add stores p under key.
func (c *threadSafeMap) Add(key string, p *Pod) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.items[key] = p
}

// Update replaces the pod under key with p.
func (c *threadSafeMap) Update(key string, p *Pod) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.items[key] = p
}

// Delete removes the pod under key.
func (c *threadSafeMap) Delete(key string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	delete(c.items, key)
}

// Get returns the pod under key.
func (c *threadSafeMap) Get(key string) (*Pod, bool) {
	c.lock.RLock()
	defer c.lock.RUnlock()
	p, ok := c.items[key]
	return p, ok
}

// List returns all the pods.
func (c *threadSafeMap) List() []*Pod {
	c.lock.RLock()
	defer c.lock.RUnlock()
	list := make([]*Pod, 0, len(c.items))
	for _, p := range c.items {
		list = append(list, p)
	}
	return list
}
