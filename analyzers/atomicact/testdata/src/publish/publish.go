// Package publish reads, after a load-acquire, what a store-release
// published.
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

// Get loads the size with acquire, then the pointer published before it.
func (t *Table) Get(i int) int {
	s := loadAcquire(&t.size)
	l := t.local
	if uintptr(i) < s {
		return *(*int)(unsafe.Add(l, i*8))
	}
	return 0
}

// Peek reads the pointer with no acquire before it.
func (t *Table) Peek() unsafe.Pointer {
	return t.local // want `t.local is read plainly here but accessed atomically elsewhere \(atomic.Store at publish.go:\d+\)`
}

// Size reads the size plainly, which the linked functions access atomically.
func (t *Table) Size() uintptr {
	return t.size // want `t.size is read plainly here but accessed atomically elsewhere \(atomic.Store at publish.go:\d+\)`
}

// Box publishes data by setting ready after it.
type Box struct {
	ready uint32         // want ready:`atomic\(atomic.Store at publish.go:\d+\)`
	data  unsafe.Pointer // want data:`atomic\(atomic.Store at publish.go:\d+\)`
}

func (b *Box) Set(p unsafe.Pointer) {
	atomic.StorePointer(&b.data, p)
	atomic.StoreUint32(&b.ready, 1)
}

func (b *Box) Get() unsafe.Pointer {
	if atomic.LoadUint32(&b.ready) == 0 {
		return nil
	}
	return b.data
}

// Flag is set before its data is stored: loading the flag orders nothing.
type Flag struct {
	ready uint32         // want ready:`atomic\(atomic.Store at publish.go:\d+\)`
	data  unsafe.Pointer // want data:`atomic\(atomic.Store at publish.go:\d+\)`
}

func (f *Flag) Set(p unsafe.Pointer) {
	atomic.StoreUint32(&f.ready, 1)
	atomic.StorePointer(&f.data, p)
}

func (f *Flag) Get() unsafe.Pointer {
	if atomic.LoadUint32(&f.ready) == 0 {
		return nil
	}
	return f.data // want `f.data is read plainly here but accessed atomically elsewhere`
}

// Reset writes plainly after the acquire: a write is never ordered so.
func (b *Box) Reset() {
	if atomic.LoadUint32(&b.ready) != 0 {
		b.data = nil // want `b.data is written plainly here but accessed atomically elsewhere`
	}
}

var tables []*Table

// cleanup is called by name from elsewhere (the directive below), in a
// context not shown here: its plain accesses are not reported.
//
//go:linkname cleanup
func cleanup() {
	for _, t := range tables {
		t.local = nil
		t.size = 0
	}
}

// reset is an ordinary function: the same accesses are reported.
func reset(t *Table) {
	t.local = nil // want `t.local is written plainly here but accessed atomically elsewhere`
	t.size = 0    // want `t.size is written plainly here but accessed atomically elsewhere`
}
