// Package atomicops uses sync/atomic correctly: an atomic load and store
// made under a mutex, while another goroutine adds without it, and a
// work loop whose goroutines claim indexes with atomic adds. One atomic
// operation is indivisible, and an add between two of another
// goroutine's adds loses nothing: no finding.
package atomicops

import (
	"sync"
	"sync/atomic"
	"testing"
)

type rate struct {
	mu sync.Mutex
	n  uint64
}

func (r *rate) set(v uint64) {
	r.mu.Lock()
	atomic.StoreUint64(&r.n, v)
	r.mu.Unlock()
}

func (r *rate) get() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return atomic.LoadUint64(&r.n)
}

func (r *rate) add(d uint64) { atomic.AddUint64(&r.n, d) }

func TestUnderLock(t *testing.T) {
	var r rate
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			r.set(uint64(i))
			_ = r.get()
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			r.add(1)
		}
	}()
	wg.Wait()
}

func forEach(n, workers int, f func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

func TestClaim(t *testing.T) {
	var sum atomic.Int64
	forEach(50, 3, func(i int) { sum.Add(int64(i)) })
	if sum.Load() != 1225 {
		t.Errorf("sum %d, want 1225", sum.Load())
	}
}
