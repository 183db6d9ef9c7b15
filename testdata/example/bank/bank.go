// Package bank is avcheck's bundled example: a small bank whose every
// access holds a lock, so the race detector is silent, yet several of its
// operations are not atomic.
package bank

import (
	"sync"
	"sync/atomic"
)

// Account is a balance behind a mutex.
type Account struct {
	mu      sync.Mutex
	balance int
	history []int
}

// Balance returns the current balance.
func (a *Account) Balance() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.balance
}

// Add changes the balance by d.
func (a *Account) Add(d int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.balance += d
	a.history = append(a.history, d)
}

// Withdraw checks the balance in one critical section and takes the money
// in another: two withdrawals can both pass the check.
func (a *Account) Withdraw(amt int) bool {
	if a.Balance() < amt {
		return false
	}
	a.Add(-amt)
	return true
}

// WithdrawAtomic is the fix: one critical section.
func (a *Account) WithdrawAtomic(amt int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.balance < amt {
		return false
	}
	a.balance -= amt
	a.history = append(a.history, -amt)
	return true
}

// Interest reads and writes the balance in two critical sections: a
// deposit made in between is lost.
func (a *Account) Interest(pct int) {
	a.mu.Lock()
	b := a.balance
	a.mu.Unlock()
	gain := b * pct / 100
	a.mu.Lock()
	a.balance = b + gain
	a.mu.Unlock()
}

// Len reads the history without the lock that guards it elsewhere.
func (a *Account) Len() int {
	return len(a.history)
}

// Bank counts its open accounts.
type Bank struct {
	open    int32
	audited int32
}

// Audit runs at most once, it means to: the load and the store are two
// steps, so two goroutines can both audit.
func (b *Bank) Audit(run func()) {
	if atomic.LoadInt32(&b.audited) == 0 {
		atomic.StoreInt32(&b.audited, 1)
		run()
	}
}

// Open counts an account atomically.
func (b *Bank) Open() { atomic.AddInt32(&b.open, 1) }

// Report reads the count plainly, racing with Open.
func (b *Bank) Report() int32 { return b.open }
