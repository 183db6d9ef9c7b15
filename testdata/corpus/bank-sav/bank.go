// Package banksav is bank-sav, the parameterised bank of the Fusion and
// AVFilter benchmarks (seed 001 section 6 and Table 1; seed 000 Table 3)
// with the partial fix: a withdrawal is one critical section that waits on
// a condition variable until the balance covers it, but a deposit still
// reads the balance in one critical section and writes it in another. A
// withdrawal can run between a deposit's read and its write, and the
// deposit then writes back a balance that misses it.
//
// Ground truth: a real atomicity violation on every account's balance
// (deposit's read and write, interleaved by a withdrawal's write); the
// withdrawals themselves are atomic.
package banksav

import "sync"

// Account is one balance.
type Account struct {
	mu      sync.Mutex
	funds   *sync.Cond // signalled when the balance grows
	balance int
}

// Bank is a ring of accounts.
type Bank struct {
	accts []*Account
}

// New opens n accounts holding 100 each.
func New(n int) *Bank {
	b := &Bank{}
	for range n {
		a := &Account{balance: 100}
		a.funds = sync.NewCond(&a.mu)
		b.accts = append(b.accts, a)
	}
	return b
}

// Deposit adds amt in two critical sections: the partial fix left it so.
func (a *Account) Deposit(amt int) {
	a.mu.Lock()
	bal := a.balance
	a.mu.Unlock()
	a.mu.Lock()
	a.balance = bal + amt
	a.mu.Unlock()
	a.funds.Broadcast()
}

// Withdraw waits until the balance covers amt and takes it, in one
// critical section.
func (a *Account) Withdraw(amt int) {
	a.mu.Lock()
	for a.balance < amt {
		a.funds.Wait()
	}
	a.balance -= amt
	a.mu.Unlock()
}

// Transfer moves amt from account from to account to.
func (b *Bank) Transfer(from, to, amt int) {
	b.accts[from].Withdraw(amt)
	b.accts[to].Deposit(amt)
}

// Total is the sum of the balances.
func (b *Bank) Total() int {
	t := 0
	for _, a := range b.accts {
		a.mu.Lock()
		t += a.balance
		a.mu.Unlock()
	}
	return t
}
