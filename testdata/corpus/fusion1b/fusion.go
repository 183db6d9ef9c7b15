// Package fusion1b is Fusion's Fig. 1(b) (seed 001 section 1): T1's atomic
// block writes x := 1 and reads it back, then signals a condition
// variable; T2 waits for the signal and writes x := 3. Ignoring
// synchronisation, T2's write could fall between T1's write and read
// (t1 t4 t5 t2 t3), but T2 cannot pass its wait before T1 signals. In Go
// the signal is a sync.Cond with the flag it guards.
//
// Ground truth: no atomicity violation (the block is serializable).
package fusion1b

import "sync"

// State is the shared x and the signal.
type State struct {
	mu     sync.Mutex
	c      *sync.Cond
	x      int
	a      int
	signal bool
}

// New returns the initial state, x = 0.
func New() *State {
	s := &State{}
	s.c = sync.NewCond(&s.mu)
	return s
}

// T1 is Fig. 1(b)'s first thread.
func (s *State) T1() {
	//avcheck:atomic
	{
		s.mu.Lock()
		s.x = 1 // t1
		s.mu.Unlock()
		s.mu.Lock()
		s.a = s.x + 1 // t2
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.signal = true // t3
	s.mu.Unlock()
	s.c.Signal()
}

// T2 is Fig. 1(b)'s second thread.
func (s *State) T2() {
	s.mu.Lock()
	for !s.signal { // t4
		s.c.Wait()
	}
	s.x = 3 // t5
	s.mu.Unlock()
}
