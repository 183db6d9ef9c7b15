// Package banknav is bank-nav, the parameterised bank of the Fusion and
// AVFilter benchmarks (seed 001 section 6 and Table 1; seed 000 Table 3)
// with the full fix: a transaction lock held across the whole transfer,
// with each account's own lock nested inside it.
//
// Ground truth: no atomicity violation.
package banknav

import "sync"

// Account is one balance.
type Account struct {
	mu      sync.Mutex
	balance int
}

// Bank is a ring of accounts and the transaction lock.
type Bank struct {
	tx    sync.Mutex
	accts []*Account
}

// New opens n accounts holding 100 each.
func New(n int) *Bank {
	b := &Bank{}
	for range n {
		b.accts = append(b.accts, &Account{balance: 100})
	}
	return b
}

// Deposit adds amt; its read and write are two critical sections of the
// account's lock, made atomic by the transaction lock around them.
func (a *Account) Deposit(amt int) {
	a.mu.Lock()
	bal := a.balance
	a.mu.Unlock()
	a.mu.Lock()
	a.balance = bal + amt
	a.mu.Unlock()
}

// Withdraw takes amt, like Deposit.
func (a *Account) Withdraw(amt int) {
	a.mu.Lock()
	bal := a.balance
	a.mu.Unlock()
	a.mu.Lock()
	a.balance = bal - amt
	a.mu.Unlock()
}

// Transfer moves amt from account from to account to as one transaction.
func (b *Bank) Transfer(from, to, amt int) {
	b.tx.Lock()
	defer b.tx.Unlock()
	b.accts[from].Withdraw(amt)
	b.accts[to].Deposit(amt)
}

// Total is the sum of the balances.
func (b *Bank) Total() int {
	b.tx.Lock()
	defer b.tx.Unlock()
	t := 0
	for _, a := range b.accts {
		t += a.balance
	}
	return t
}
