// Package fixed is the bank's withdrawal made atomic: one critical section
// checks and takes the money.
package fixed

import "sync"

// Account is a balance behind a mutex.
type Account struct {
	mu      sync.Mutex
	balance int
}

// Deposit adds d to the balance.
func (a *Account) Deposit(d int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.balance += d
}

// Withdraw checks and takes the money in one critical section.
func (a *Account) Withdraw(amt int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.balance < amt {
		return false
	}
	a.balance -= amt
	return true
}
