// Package fusion1a is Fusion's Fig. 1(a) (seed 001 section 1): T1's atomic
// block reads x and writes x+1; T2 reads x and writes 5 only if what it
// read is positive. x starts at 0. Ignoring data, the interleaving
// t1 t3 t4 t5 t2 (T2 entirely between T1's read and write) looks like a
// lost update, but it cannot happen: T2 would then read 0 and not write.
// Every access holds the lock, as Go requires of shared memory; the block
// is the intended atomic region.
//
// Ground truth: no atomicity violation (the block is serializable).
package fusion1a

import "sync"

// State is the shared x.
type State struct {
	mu sync.Mutex
	x  int
}

// T1 is Fig. 1(a)'s first thread.
func (s *State) T1() {
	//avcheck:atomic
	{
		s.mu.Lock()
		a := s.x // t1
		s.mu.Unlock()
		s.mu.Lock()
		s.x = a + 1 // t2
		s.mu.Unlock()
	}
}

// T2 is Fig. 1(a)'s second thread.
func (s *State) T2() {
	s.mu.Lock()
	b := s.x // t3
	s.mu.Unlock()
	if b > 0 { // t4
		s.mu.Lock()
		s.x = 5 // t5
		s.mu.Unlock()
	}
}
