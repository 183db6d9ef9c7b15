package helpers

import "sync"

type connReader struct {
	mu     sync.Mutex
	cond   *sync.Cond
	inRead bool
	remain int
}

func (cr *connReader) lock() {
	cr.mu.Lock()
	if cr.cond == nil {
		cr.cond = sync.NewCond(&cr.mu)
	}
}

func (cr *connReader) unlock() { cr.mu.Unlock() }

func (cr *connReader) hitReadLimit() bool { return cr.remain <= 0 }

func (cr *connReader) Read(p []byte) int {
	cr.lock()
	if cr.inRead {
		cr.unlock()
		panic("concurrent read")
	}
	if cr.hitReadLimit() {
		cr.unlock()
		return 0
	}
	cr.inRead = true
	cr.unlock()
	return len(p)
}
