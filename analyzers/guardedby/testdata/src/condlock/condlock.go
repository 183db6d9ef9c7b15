// Package condlock has a buffer whose helpers take its lock only when
// their caller does not hold it already, and methods that set it up and
// return it, to be chained, before it is shared.
package condlock

import "sync"

type Buffer struct {
	mu    sync.Mutex
	r, w  int
	err   error
	block bool
	mode  int
}

// New returns a buffer, set up by chaining: NewBuffer().SetBlocking(true).
func New() *Buffer { return &Buffer{} }

// SetBlocking is a builder: it returns its receiver, takes no lock, and
// is called before the buffer is shared.
func (b *Buffer) SetBlocking(block bool) *Buffer {
	b.block = block
	return b
}

// SetMode is not: it returns nothing, and another goroutine may call it.
func (b *Buffer) SetMode(m int) {
	b.mode = m // want `b.mode is accessed without b.mu, which guards it \(held at 3 of its 4 accesses\)`
}

// readErr takes the lock unless its caller holds it (locked).
func (b *Buffer) readErr(locked bool) error {
	if !locked {
		b.mu.Lock()
		defer b.mu.Unlock()
	}
	if b.err != nil && b.r == b.w {
		return b.err
	}
	return nil
}

func (b *Buffer) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.readErr(true); err != nil {
		return 0, err
	}
	if b.block && b.mode > 0 {
		b.r++
	}
	return len(p), nil
}

func (b *Buffer) Write(p []byte) (int, error) {
	if err := b.readErr(false); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.block && b.mode > 1 {
		b.err = nil
		b.w++
	}
	return len(p), nil
}

func (b *Buffer) Reset() {
	b.mu.Lock()
	b.r, b.w, b.err = 0, 0, nil
	b.mode = 0
	b.mu.Unlock()
}

// Ring's helper takes its lock as Buffer's does, but Peek says it holds
// the lock, and does not: the helper's reads are unguarded then.
type Ring struct {
	mu   sync.Mutex
	r, w int
}

func (g *Ring) empty(locked bool) bool {
	if !locked {
		g.mu.Lock()
		defer g.mu.Unlock()
	}
	return g.r == g.w // want `g.r is accessed without g.mu, which guards it \(held at 2 of its 3 accesses\)` `g.w is accessed without g.mu, which guards it \(held at 2 of its 3 accesses\)`
}

func (g *Ring) Get() bool {
	if g.empty(false) {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.r++
	return true
}

func (g *Ring) Put() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.empty(true) {
		g.w++
	}
}

func (g *Ring) Peek() bool { return g.empty(true) }

func (g *Ring) Reset() {
	g.mu.Lock()
	g.r, g.w = 0, 0
	g.mu.Unlock()
}
