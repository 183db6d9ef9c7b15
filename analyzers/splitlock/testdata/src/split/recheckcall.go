package split

import (
	"sync"
	"time"
)

// deadlines is a queue kept in deadline order: a named slice with
// methods, so that its writes are made through calls.
type deadlines []time.Time

func (q deadlines) isEmpty() bool { return len(q) == 0 }
func (q *deadlines) pop()         { *q = (*q)[1:] }

// Sweeper computes how long to sleep from its queue in one critical
// section, and when the timer fires it sweeps in another. The sweep
// checks the queue again under its own lock before it pops, through a
// call: the wait's stale view of the queue only makes it wake early or
// late. Not reported.
type Sweeper struct {
	mu   sync.RWMutex
	q    deadlines
	stop chan struct{}
}

func (s *Sweeper) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.q.isEmpty() {
		return
	}
	for s.q[0].Before(time.Now()) {
		s.q.pop()
		if s.q.isEmpty() {
			break
		}
	}
}

func (s *Sweeper) Run() {
	wait := func() time.Duration {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if !s.q.isEmpty() {
			return time.Until(s.q[0])
		}
		return time.Hour
	}
	timer := time.NewTimer(wait())
	for {
		select {
		case <-s.stop:
			return
		case <-timer.C:
			s.Sweep()
			timer.Reset(wait())
		}
	}
}

// BlindSweeper's sweep pops without looking at the queue: it relies on
// the check made before it, which another sweep can make stale.
type BlindSweeper struct {
	mu sync.Mutex
	q  deadlines
}

func (s *BlindSweeper) popOne() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.q.pop()
}

func (s *BlindSweeper) Run() {
	s.mu.Lock()
	empty := s.q.isEmpty() // want `s.q is checked in one critical section of s.mu and written in another`
	s.mu.Unlock()
	if !empty {
		s.popOne()
	}
}
