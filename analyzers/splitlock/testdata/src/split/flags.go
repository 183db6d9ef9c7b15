package split

import "sync"

// Reader's Read takes the inRead flag in its first critical section and
// gives it back in the second: no other Read can run in between, so the
// check of remain is still true at the write. Not reported.
type Reader struct {
	mu     sync.Mutex
	inRead bool
	remain int
}

func (r *Reader) Read(n int) int {
	r.mu.Lock()
	if r.inRead {
		r.mu.Unlock()
		panic("concurrent Read")
	}
	if r.remain <= 0 {
		r.mu.Unlock()
		return 0
	}
	r.inRead = true
	r.mu.Unlock()

	r.mu.Lock()
	r.inRead = false
	r.remain -= n
	r.mu.Unlock()
	return n
}

// Without the flag the same code is a stale check.
func (r *Reader) ReadUnflagged(n int) int {
	r.mu.Lock()
	if r.remain <= 0 { // want `r.remain is checked in one critical section of r.mu and written in another`
		r.mu.Unlock()
		return 0
	}
	r.mu.Unlock()

	r.mu.Lock()
	r.remain -= n
	r.mu.Unlock()
	return n
}

// Want's deliver claims done in its own critical section: however stale
// the check of ctx in dial, one deliver ever writes. Not reported.
type Want struct {
	mu   sync.Mutex
	ctx  *int
	done bool
}

func (w *Want) getCtx() *int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ctx
}

func (w *Want) deliver() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return false
	}
	w.ctx = nil
	w.done = true
	return true
}

func (w *Want) dial() {
	if w.getCtx() == nil {
		return
	}
	w.deliver()
}

// clear writes ctx with a check of done that it does not set: the check
// in dialClear can be stale at the write.
func (w *Want) clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.ctx = nil
}

func (w *Want) dialClear() {
	if w.getCtx() == nil { // want `w.ctx is checked by w.getCtx\(\) in one critical section of w.mu and written in another`
		return
	}
	w.clear()
}

// A receiver that a closure captures is still the receiver: its lost
// update is reported.
func (c *Counter) AddLater(d int) func() {
	c.mu.Lock()
	n := c.n // want `c.n is read and written in two critical sections of c.mu; the update can be lost`
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + d
	c.mu.Unlock()
	return func() { c.n = 0 }
}

// A semaphore whose TryAcquire takes what it checked in its own critical
// section: its result says what it did, not what the caller then acts on.
type Sema struct {
	mu      sync.Mutex
	cur     int
	waiters []chan struct{}
}

func (s *Sema) TryAcquire() bool {
	s.mu.Lock()
	ok := s.cur < 4 && len(s.waiters) == 0
	if ok {
		s.cur++
	}
	s.mu.Unlock()
	return ok
}

func (s *Sema) Wait() {
	s.mu.Lock()
	s.waiters = append(s.waiters, make(chan struct{}))
	s.mu.Unlock()
}

func AcquireOrWait(s *Sema) {
	if !s.TryAcquire() {
		s.Wait()
	}
}

// HasWaiters only reads: acting on its result is a check-then-act.
func (s *Sema) HasWaiters() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters) > 0
}

func WaitFirst(s *Sema) {
	if !s.HasWaiters() { // want `s.waiters is checked by s.HasWaiters\(\) in one critical section of s.mu and written in another; the check can be stale by the time of the write`
		s.Wait()
	}
}
