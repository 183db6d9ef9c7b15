// Package pollloop has a test that polls a sink until a deadline: the
// loop's condition reads the clock (time.Now, the standard library's own
// state) and a duration captured once before the goroutines start, and
// neither is evidence that the loop's body is meant to be one step with
// them. Each call of the sink is a critical section of its own.
package pollloop

import "sync"

type Sink struct {
	mu        sync.RWMutex
	intervals []int
}

func (s *Sink) Add(v int) {
	s.mu.Lock()
	s.intervals = append(s.intervals, v)
	s.mu.Unlock()
}

func (s *Sink) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.intervals)
}
