// Package bankav is bank-av, the parameterised bank of the Fusion and
// AVFilter benchmarks (seed 001 section 6 and Table 1; seed 000 Table 3):
// n accounts in a ring, goroutine i moving money from account i to account
// i+1. Deposit and Withdraw read a balance and write it back with nothing
// protecting the pair, so a deposit and a withdrawal on one account can
// interleave and one of them is lost.
//
// Ground truth: real atomicity violations (and data races) on every
// account's balance.
package bankav

// Account is one balance.
type Account struct {
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
		b.accts = append(b.accts, &Account{balance: 100})
	}
	return b
}

// Deposit adds amt: the read and the write are meant to be one step.
func (a *Account) Deposit(amt int) {
	bal := a.balance
	a.balance = bal + amt
}

// Withdraw takes amt: the read and the write are meant to be one step.
func (a *Account) Withdraw(amt int) {
	bal := a.balance
	a.balance = bal - amt
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
		t += a.balance
	}
	return t
}
