// Package splitpush pushes onto a linked stack and appends to a log, each
// in two critical sections: every access holds the lock, yet the pointer
// or the slice one goroutine stores can be lost to the other's.
package splitpush

import "sync"

type node struct {
	v    int
	next *node
}

// Stack is a linked stack and a log behind one mutex.
type Stack struct {
	mu  sync.Mutex
	top *node
	log []int
}

// Push reads the top in one critical section and stores the new node
// over it in another, and returns v.
func (s *Stack) Push(v int) int {
	s.mu.Lock()
	top := s.top
	s.mu.Unlock()
	n := &node{v: v, next: top}
	s.mu.Lock()
	s.top = n
	s.mu.Unlock()
	return v
}

// Log reads the log in one critical section and stores it with v
// appended in another.
func (s *Stack) Log(v int) {
	s.mu.Lock()
	log := s.log
	s.mu.Unlock()
	s.mu.Lock()
	s.log = append(log, v)
	s.mu.Unlock()
}
