// Package constwrite mirrors a worker pool's Pause and Stop: Pause sends
// on q under stopLock only while stopped is false, and Stop sets stopped
// to true under stopLock before it closes q, so q is never closed
// between two of Pause's sends. Stop's write of stopped stores a
// constant, which the recorders record with it: the interleaving that
// closes q between the sends would have Pause read true and send
// nothing, and the precise stage refutes it.
package constwrite

import "sync"

// Pool hands values to a worker until it is stopped.
type Pool struct {
	stopLock sync.Mutex
	stopped  bool
	q        chan int
	done     chan struct{}
}

// New starts a pool's worker.
func New() *Pool {
	p := &Pool{q: make(chan int), done: make(chan struct{})}
	go func() {
		for range p.q {
		}
		close(p.done)
	}()
	return p
}

// Pause sends n values to the worker, unless the pool is stopped.
func (p *Pool) Pause(n int) {
	p.stopLock.Lock()
	defer p.stopLock.Unlock()
	if p.stopped {
		return
	}
	for i := 0; i < n; i++ {
		p.q <- i
	}
}

// Stop marks the pool stopped, then closes its queue and waits for the
// worker.
func (p *Pool) Stop() {
	p.stopLock.Lock()
	p.stopped = true
	p.stopLock.Unlock()
	close(p.q)
	<-p.done
}
