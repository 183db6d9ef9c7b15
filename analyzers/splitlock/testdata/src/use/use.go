package use

import (
	"lib"
	"time"
)

func Raise(s *lib.Server) {
	c := s.Config() // want `s.cfg is read by s.Config\(\) and written in two critical sections of s.mu; the update can be lost`
	c.Limit++
	s.SetConfig(c)
}

// RaiseAtomic uses the single critical section.
func RaiseAtomic(s *lib.Server) {
	s.Update(func(c *lib.Config) { c.Limit++ })
}

// Reset writes a value that does not come from the read.
func Reset(s *lib.Server) lib.Config {
	old := s.Config()
	s.SetConfig(lib.Config{})
	return old
}

func Ensure(p *lib.Pool, c *lib.Conn) {
	if p.Current() == nil { // want `p.cur is checked by p.Current\(\) in one critical section of p.mu and written in another`
		p.Install(c)
	}
}

func EnsureAtomic(p *lib.Pool, c *lib.Conn) {
	p.InstallIfEmpty(c)
}

func Withdraw(a *lib.Account, amt int) bool {
	if a.Balance() >= amt { // want `a.bal is checked by a.Balance\(\) in one critical section of a.mu and written in another`
		a.Add(-amt)
		return true
	}
	return false
}

// Deposit does not decide on the balance.
func Deposit(a *lib.Account, amt int) int {
	b := a.Balance()
	a.Add(amt)
	return b
}

func Memo(c *lib.Cache, k string) int {
	v, ok := c.Get(k) // want `c.m\[\] is checked by c.Get\(k\) in one critical section of c.mu and written in another`
	if !ok {
		v = len(k)
		c.Set(k, v)
	}
	return v
}

func MemoAtomic(c *lib.Cache, k string) {
	c.SetIfAbsent(k, len(k))
}

func Take(q *lib.Queue) int {
	for q.Len() == 0 { // want `q.items is checked by q.Len\(\) in one critical section of q.mu and written in another`
		time.Sleep(time.Millisecond)
	}
	v := q.Front()
	q.PopFront()
	return v
}

// Different state: the check is on one account, the write on another.
func Move(from, to *lib.Account, amt int) {
	if from.Balance() >= amt {
		to.Add(amt)
	}
}

// MemoShort: the check is one part of a condition.
func MemoShort(c *lib.Cache, k string) {
	_, ok := c.Get(k) // want `c.m\[\] is checked by c.Get\(k\) in one critical section of c.mu and written in another`
	if !ok && len(k) > 0 {
		c.Set(k, 1)
	}
}

// FarWrite: an early return on the check, then a write that its own
// condition decides; the check does not decide it.
func FarWrite(c *lib.Cache, k string, n int) {
	if _, ok := c.Get(k); ok {
		return
	}
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			c.Set(k, i)
		}
	}
}
