// Package publish accesses fields atomically through functions linked
// to the runtime's atomics.
package publish

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

//go:linkname loadAcquire internal/runtime/atomic.LoadAcquintptr
func loadAcquire(ptr *uintptr) uintptr

//go:linkname storeRelease internal/runtime/atomic.StoreReluintptr
func storeRelease(ptr *uintptr, val uintptr)

// Table publishes its array by storing the size after the pointer.
type Table struct {
	mu    sync.Mutex
	local unsafe.Pointer // want local:`atomic\(atomic.Store at publish.go:\d+\)`
	size  uintptr        // want size:`atomic\(atomic.Store at publish.go:\d+\)`
}

func (t *Table) grow(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	arr := make([]int, n)
	atomic.StorePointer(&t.local, unsafe.Pointer(&arr[0]))
	storeRelease(&t.size, uintptr(n))
}

// Peek reads the pointer plainly.
func (t *Table) Peek() unsafe.Pointer {
	return t.local // want `t.local is read plainly here but accessed atomically elsewhere \(atomic.Store at publish.go:\d+\)`
}

// Size reads the size plainly, which the linked functions access atomically.
func (t *Table) Size() uintptr {
	return t.size // want `t.size is read plainly here but accessed atomically elsewhere \(atomic.Store at publish.go:\d+\)`
}
