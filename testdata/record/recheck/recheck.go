// Package recheck is a circuit breaker that checks its flag under the
// read lock and, to open, checks it again under the write lock: a
// recorder test of the re-check's flag (trace.Rechecks).
package recheck

import "sync"

type breaker struct {
	mu    sync.RWMutex
	open  bool
	fails int
}

func (b *breaker) isOpen() bool {
	b.mu.RLock()
	o := b.open
	b.mu.RUnlock()
	if o {
		return true
	}
	if b.failing() {
		b.setOpen()
		return true
	}
	return false
}

func (b *breaker) failing() bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.fails > 2
}

func (b *breaker) setOpen() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		return
	}
	b.open = true
}

func (b *breaker) fail() {
	b.mu.Lock()
	b.fails++
	b.mu.Unlock()
}
