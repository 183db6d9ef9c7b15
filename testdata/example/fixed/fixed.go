// Package fixed is the bank example with every operation made atomic:
// avcheck reports nothing here.
package fixed

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

// Withdraw checks and takes the money in one critical section.
func (a *Account) Withdraw(amt int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.balance < amt {
		return false
	}
	a.balance -= amt
	a.history = append(a.history, -amt)
	return true
}

// Interest reads and writes the balance in one critical section.
func (a *Account) Interest(pct int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.balance += a.balance * pct / 100
}

// Len reads the history under its lock.
func (a *Account) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.history)
}

// Bank counts its open accounts.
type Bank struct {
	open    atomic.Int32
	audited atomic.Bool
}

// Audit runs at most once: one CompareAndSwap decides.
func (b *Bank) Audit(run func()) {
	if b.audited.CompareAndSwap(false, true) {
		run()
	}
}

// Open counts an account.
func (b *Bank) Open() { b.open.Add(1) }

// Report reads the count atomically.
func (b *Bank) Report() int32 { return b.open.Load() }
