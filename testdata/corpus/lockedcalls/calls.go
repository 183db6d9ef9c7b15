// Package lockedcalls is the most common shape of correct concurrent Go
// code: a type whose every method takes its own lock, and goroutines that
// call two of its methods one after the other, results discarded. The
// calls are adjacent, so code proximity proposes a region over them, but
// nothing read in one call flows into the next: they are two steps, each
// atomic, and no schedule breaks anything the program means.
//
// Ground truth: no violation.
package lockedcalls

import "sync"

// Counter is a count behind a mutex.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Inc adds one in one critical section.
func (c *Counter) Inc() {
	c.mu.Lock()
	v := c.n
	c.n = v + 1
	c.mu.Unlock()
}

// Get returns the count.
func (c *Counter) Get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Work increments and looks, three times.
func Work(c *Counter) {
	for i := 0; i < 3; i++ {
		c.Inc()
		_ = c.Get()
	}
}

// Account is a balance behind a mutex.
type Account struct {
	mu  sync.Mutex
	bal int
}

// Withdraw takes amt if the balance covers it.
func (a *Account) Withdraw(amt int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bal < amt {
		return false
	}
	a.bal -= amt
	return true
}

// Deposit adds amt.
func (a *Account) Deposit(amt int) {
	a.mu.Lock()
	a.bal += amt
	a.mu.Unlock()
}

// Shuffle withdraws, then deposits part of it back, each locked.
func Shuffle(a *Account) {
	a.Withdraw(60)
	a.Deposit(10)
}

// Report looks at the count and only logs it: a getter whose value
// decides nothing and meets no other value read.
func Report(c *Counter, logf func(string, ...any)) {
	c.Inc()
	logf("count %d", c.Get())
}

// Table is a map read by many readers behind an RWMutex.
type Table struct {
	mu sync.RWMutex
	m  map[string]int
}

// Lookup reads one entry under the read lock.
func (t *Table) Lookup(k string) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.m[k]
}

// Store writes one entry under the write lock.
func (t *Table) Store(k string, v int) {
	t.mu.Lock()
	t.m[k] = v
	t.mu.Unlock()
}

// Refresh stores a value and then reads another entry, each locked on
// its own.
func Refresh(t *Table, v int) {
	t.Store("a", v)
	_ = t.Lookup("a")
	_ = t.Lookup("b")
}

// Store is what the workers see of a Table.
type Store interface {
	Lookup(k string) int
	Store(k string, v int)
}

// Through calls the methods through the interface.
func Through(s Store, v int) {
	s.Store("a", v)
	_ = s.Lookup("a")
}
