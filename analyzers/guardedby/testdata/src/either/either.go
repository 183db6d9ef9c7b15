// Package either holds helpers whose callers hold different locks: the
// object's own lock, or the lock of the container that every writer of
// the object's fields holds too.
package either

import (
	"sync"
	"time"
)

// Item's mutex is for readers outside the cache. The cache reads the
// fields through expiredUnsafe with its own lock held, and every write
// of them holds both locks. Not reported.
type Item struct {
	mu        sync.RWMutex
	ttl       time.Duration
	expiresAt time.Time
}

func (it *Item) update(ttl time.Duration) {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.ttl = ttl
	it.expiresAt = time.Now().Add(ttl)
}

func (it *Item) IsExpired() bool {
	it.mu.RLock()
	defer it.mu.RUnlock()
	return it.expiredUnsafe()
}

func (it *Item) TTL() time.Duration {
	it.mu.RLock()
	defer it.mu.RUnlock()
	return it.ttl
}

func (it *Item) ExpiresAt() time.Time {
	it.mu.RLock()
	defer it.mu.RUnlock()
	return it.expiresAt
}

// expiredUnsafe runs with it.mu or the cache's mu held.
func (it *Item) expiredUnsafe() bool {
	if it.ttl <= 0 {
		return false
	}
	return it.expiresAt.Before(time.Now())
}

type Cache struct {
	mu    sync.Mutex
	items map[string]*Item
}

func (c *Cache) Set(k string, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if it, ok := c.items[k]; ok {
		it.update(ttl)
		return
	}
	it := &Item{}
	it.update(ttl)
	c.items[k] = it
}

func (c *Cache) DeleteExpired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, it := range c.items {
		if it.expiredUnsafe() {
			delete(c.items, k)
		}
	}
}

// Entry is Item with a caller of the helper that holds no lock: its read
// can run with a write.
type Entry struct {
	mu  sync.RWMutex
	ttl time.Duration
}

func (e *Entry) Set(ttl time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ttl = ttl
}

func (e *Entry) TTL() time.Duration {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.ttl
}

func (e *Entry) Expires() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.expiresUnsafe()
}

func (e *Entry) expiresUnsafe() bool {
	return e.ttl > 0 // want `e.ttl is accessed without e.mu, which guards it \(held at 2 of its 3 accesses\)`
}

// Peek calls the helper without a lock.
func Peek(e *Entry) bool { return e.expiresUnsafe() }

// Slot is Item without the container's lock at its writes: a reader
// that holds only the table's lock can run with Slot's own writers.
type Slot struct {
	mu  sync.RWMutex
	ttl time.Duration
}

func (s *Slot) Set(ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ttl = ttl
}

func (s *Slot) TTL() time.Duration {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ttl
}

func (s *Slot) Expires() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.expiresUnsafe()
}

func (s *Slot) expiresUnsafe() bool {
	return s.ttl > 0 // want `s.ttl is accessed without s.mu, which guards it \(held at 2 of its 3 accesses\)`
}

type Table struct {
	mu    sync.Mutex
	slots []*Slot
}

func (t *Table) Live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.slots {
		if s.expiresUnsafe() {
			n++
		}
	}
	return n
}

// Node's value is written under the node's own lock; a read with the
// previous node's lock held is of another node: reported.
type Node struct {
	mu   sync.Mutex
	val  int
	next *Node
}

func (n *Node) Set(v int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.val = v
}

func (n *Node) Get() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.val
}

func (n *Node) NextVal() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.next.nodeVal()
}

func (n *Node) nodeVal() int {
	return n.val // want `n.val is accessed without n.mu, which guards it \(held at 2 of its 3 accesses\)`
}

// A registry looks its entry up under the read lock and, on a miss,
// trades it for the write lock and looks again; on a hit it keeps the
// read lock. Either way the lock is held where the paths meet.
type registry struct {
	mu      sync.RWMutex
	entries map[string]int
}

func (r *registry) get(name string) (int, bool) {
	r.mu.RLock()
	_, ok := r.entries[name]
	if !ok {
		r.mu.RUnlock()
		r.mu.Lock()
		defer r.mu.Unlock()
		if v, ok := r.entries[name]; ok {
			return v, false
		}
		r.entries[name] = len(name)
	} else {
		defer r.mu.RUnlock()
	}
	return r.entries[name], !ok
}

func (r *registry) flush() {
	r.mu.Lock()
	r.entries = map[string]int{}
	r.mu.Unlock()
}

func (r *registry) leak() map[string]int {
	r.mu.RLock()
	if len(r.entries) == 0 {
		r.mu.RUnlock()
	} else {
		r.mu.RUnlock()
	}
	return r.entries // want `r.entries is accessed without r.mu, which guards it \(held at 6 of its 7 accesses\)`
}
