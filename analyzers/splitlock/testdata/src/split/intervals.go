package split

import "sync"

// A sink keeps its intervals in a slice. The current one is looked up
// under the read lock; on a miss it is created under the write lock,
// which looks again first: two goroutines that both miss create it once.
type sink struct {
	mu        sync.RWMutex
	intervals []*interval
	max       int
}

type interval struct{ start int64 }

func (s *sink) existing(start int64) *interval {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := len(s.intervals)
	if n > 0 && s.intervals[n-1].start == start {
		return s.intervals[n-1]
	}
	return nil
}

func (s *sink) create(start int64) *interval {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.intervals)
	if n > 0 && s.intervals[n-1].start == start {
		return s.intervals[n-1]
	}
	cur := &interval{start: start}
	s.intervals = append(s.intervals, cur)
	n++
	if n >= s.max {
		copy(s.intervals[0:], s.intervals[n-s.max:])
		s.intervals = s.intervals[:s.max]
	}
	return cur
}

func (s *sink) current(start int64) *interval {
	if m := s.existing(start); m != nil {
		return m
	}
	return s.create(start)
}

// add appends without looking again: two goroutines that both miss
// append two intervals for one start.
func (s *sink) add(start int64) *interval {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := &interval{start: start}
	s.intervals = append(s.intervals, cur)
	return cur
}

func (s *sink) currentBlind(start int64) *interval {
	if m := s.existing(start); m != nil { // want `s.intervals is checked by s.existing\(start\) in one critical section of s.mu and written in another`
		return m
	}
	return s.add(start)
}
