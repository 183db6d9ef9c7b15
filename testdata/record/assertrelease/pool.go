// Package assertrelease hands out tokens from a pool. Release asserts
// that the token is held, panicking otherwise, before giving it back: the
// status read decides the give-back only by panicking, an assertion of
// the caller's protocol, not a check-then-act. Take's length check
// decides its pop, which is.
package assertrelease

import "sync"

type Pool struct {
	mu   sync.Mutex
	free []*Token
}

type Token struct {
	p      *Pool
	status int
}

func (p *Pool) put(t *Token) {
	p.mu.Lock()
	t.status = 0
	p.free = append(p.free, t)
	p.mu.Unlock()
}

func (t *Token) Release() {
	if t.status != 1 {
		panic("release of a token not taken")
	}
	t.p.put(t)
}

func (p *Pool) Take() *Token {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		t := p.free[n-1]
		p.free = p.free[:n-1]
		t.status = 1
		return t
	}
	return &Token{p: p, status: 1}
}
