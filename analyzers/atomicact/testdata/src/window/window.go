// Package window holds flow-control windows: writers take what the
// window allows under a lock, and the reader of window updates adds to
// it without the lock.
package window

import (
	"sync"
	"sync/atomic"
)

// Stream's writers take turns under sendLock; Grant only adds.
type Stream struct {
	sendLock sync.Mutex
	avail    uint32 // want avail:`atomic\(atomic.Load at window.go:\d+\)`
}

func (s *Stream) Write(n uint32) uint32 {
	s.sendLock.Lock()
	defer s.sendLock.Unlock()
	return s.take(n)
}

func (s *Stream) take(n uint32) uint32 {
	w := atomic.LoadUint32(&s.avail)
	if w == 0 {
		return 0
	}
	m := min(w, n)
	atomic.AddUint32(&s.avail, ^uint32(m-1))
	return m
}

func (s *Stream) Grant(k uint32) { atomic.AddUint32(&s.avail, k) }

// Resettable's Reset stores without the lock: a take can subtract what
// the reset already removed.
type Resettable struct {
	sendLock sync.Mutex
	avail    uint32 // want avail:`atomic\(atomic.Load at window.go:\d+\)`
}

func (s *Resettable) Write(n uint32) uint32 {
	s.sendLock.Lock()
	defer s.sendLock.Unlock()
	return s.take(n)
}

func (s *Resettable) take(n uint32) uint32 {
	w := atomic.LoadUint32(&s.avail) // want `the atomic load of s.avail computes a later atomic Add of it; another goroutine can change it in between: use CompareAndSwap`
	if w == 0 {
		return 0
	}
	m := min(w, n)
	atomic.AddUint32(&s.avail, ^uint32(m-1))
	return m
}

func (s *Resettable) Grant(k uint32) { atomic.AddUint32(&s.avail, k) }

func (s *Resettable) Reset() { atomic.StoreUint32(&s.avail, 0) }

// Unlocked's writers take no lock: two can take the same units.
type Unlocked struct {
	avail uint32 // want avail:`atomic\(atomic.Load at window.go:\d+\)`
}

func (s *Unlocked) Take(n uint32) uint32 {
	w := atomic.LoadUint32(&s.avail) // want `the atomic load of s.avail computes a later atomic Add of it`
	if w == 0 {
		return 0
	}
	m := min(w, n)
	atomic.AddUint32(&s.avail, ^uint32(m-1))
	return m
}

func (s *Unlocked) Grant(k uint32) { atomic.AddUint32(&s.avail, k) }

// Counter's WithResolution is a builder: it returns its receiver and
// takes no lock, so it sets the counter up before it is shared, and its
// plain write of current is not reported. Resize takes no lock and does
// not return its receiver: its plain write is.
type Counter struct {
	current  int32 // want current:`atomic\(atomic.Load at window.go:\d+\)`
	partials []int64
}

func NewCounter() *Counter { return new(Counter).WithResolution(20) }

func (c *Counter) WithResolution(n int) *Counter {
	c.partials = make([]int64, n)
	c.current = 0
	return c
}

func (c *Counter) Resize(n int) {
	c.partials = make([]int64, n)
	c.current = 0 // want `c.current is written plainly here but accessed atomically elsewhere`
}

func (c *Counter) Now() int64 { return c.partials[atomic.LoadInt32(&c.current)] }
