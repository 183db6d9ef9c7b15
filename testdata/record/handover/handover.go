// Package handover runs handlers one at a time on goroutines of their
// own: the publisher locks the handler's mutex before starting its
// goroutine, and the goroutine unlocks it when the handler is done, so
// that the next publish waits for it. Go lets one goroutine unlock a
// mutex another locked.
package handover

import "sync"

// Bus runs its handler for each published value.
type Bus struct {
	handler func(int)
	mu      sync.Mutex // held from a publish until its handler is done
	wg      sync.WaitGroup
}

// New returns a Bus that runs h.
func New(h func(int)) *Bus { return &Bus{handler: h} }

// Publish runs the handler on v on a goroutine of its own, after the
// previous handler is done.
func (b *Bus) Publish(v int) {
	b.mu.Lock()
	b.wg.Add(1)
	go b.run(v)
}

func (b *Bus) run(v int) {
	defer b.wg.Done()
	b.handler(v)
	b.mu.Unlock()
}

// Wait waits for every handler to be done.
func (b *Bus) Wait() { b.wg.Wait() }
