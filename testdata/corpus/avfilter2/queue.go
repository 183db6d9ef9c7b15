// Package avfilter2 is AVFilter's Fig. 2 (seed 000 section 3.1), a
// reformatted Apache web server snippet: T1 increments item (1R, 1W), then
// pushes item's address on a queue under a lock and signals; T2 waits
// under the lock until the queue is not empty, pops the address and
// writes 2 through it. Predicted without data, T2's write (line 10) could
// fall between T1's read and write of item, but T2 can only pop the
// address after T1 has pushed it, which is after 1W: the read-after-write
// of index (lines 3 and 7, 3 and 8) forbids it. The increment is the
// intended atomic region.
//
// Ground truth: no atomicity violation.
package avfilter2

import "sync"

// Queue is Fig. 2's shared state.
type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	item  int
	q     [4]*int
	index int
}

// New returns the initial state: item = 0, index = 0.
func New() *Queue {
	s := &Queue{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// T1 is the producer.
func (s *Queue) T1() {
	//avcheck:atomic
	{
		tmp := s.item    // 1R
		s.item = tmp + 1 // 1W
	}
	s.mu.Lock()            // 2
	s.q[s.index] = &s.item // 3
	s.index++              // 3
	s.cond.Signal()        // 4
	s.mu.Unlock()          // 5
}

// T2 is the consumer.
func (s *Queue) T2() {
	s.mu.Lock()        // 6
	for s.index == 0 { // 7
		s.cond.Wait()
	}
	s.index--           // 8
	pop := s.q[s.index] // 8
	s.mu.Unlock()       // 9
	*pop = 2            // 10
}
