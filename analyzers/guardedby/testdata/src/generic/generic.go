// Package generic has a generic type whose helpers run with its lock.
package generic

import "sync"

type Entry[K comparable] struct {
	Key    K
	Bucket int
}

type LRU[K comparable, V any] struct {
	mu    sync.Mutex
	next  int
	items map[K]V
	size  int
}

func (c *LRU[K, V]) Add(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[k] = v
	c.addToBucket(&Entry[K]{Key: k})
}

func (c *LRU[K, V]) Advance() {
	c.mu.Lock()
	c.next++
	c.mu.Unlock()
}

func (c *LRU[K, V]) Resize(n int) {
	c.mu.Lock()
	c.size = n
	c.mu.Unlock()
}

func (c *LRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items) + c.size + c.next
}

// addToBucket is called with the lock held, from a generic method: the
// call is of an instance of it.
func (c *LRU[K, V]) addToBucket(e *Entry[K]) {
	e.Bucket = c.next
}

// Cap reads size without the lock.
func (c *LRU[K, V]) Cap() int {
	return c.size // want `c.size is accessed without c.mu, which guards it \(held at 2 of its 3 accesses\)`
}
