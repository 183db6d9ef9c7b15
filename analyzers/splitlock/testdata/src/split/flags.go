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
