package regsync

import (
	"runtime"
	"sync"
)

// Sem is a counting semaphore; each method is one critical section.
type Sem struct {
	mu  sync.Mutex
	cur int64
}

func (s *Sem) Acquire(n int64) { // want Acquire:`summary\(read s.cur \[lock s.mu\]; write s.cur \[lock s.mu\] <-params\[1\]; takes s.mu\)`
	s.mu.Lock()
	s.cur += n
	s.mu.Unlock()
}

func (s *Sem) Release(n int64) { // want Release:`summary\(read s.cur \[lock s.mu\]; write s.cur \[lock s.mu\] <-params\[1\]; takes s.mu\)`
	s.mu.Lock()
	s.cur -= n
	s.mu.Unlock()
}

// Spread sizes a WaitGroup by the scheduler's processors and starts as
// many workers: the value that runtime.GOMAXPROCS reads and wg.Add
// writes is the scheduler's and the WaitGroup's state, not data, and is
// no evidence that the calls between them are one step.
func Spread(s *Sem) { // want Spread:`summary\(.*\)`
	n := int64(runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	wg.Add(int(n))
	for i := n; i > 0; i-- {
		s.Acquire(1)
		go func() {
			defer wg.Done()
			s.Release(1)
		}()
	}
	wg.Wait()
}

// Grow stores a key in a sync.Map unless its Load found it: the Load
// decides the Store, the check-then-act that LoadOrStore exists for.
func Grow(m *sync.Map) { // want Grow:`summary\(.*\)`
	v, ok := m.Load("n")
	if !ok {
		m.Store("n", v)
	}
}
