// Program callbranch reads a balance and writes it back in three ways
// that differ in what tests the value read between the read and the
// write: a called function (withdraw), a later branch of the function
// that read it (deposit, through balance), and nothing (add, whose calls
// pass only a parameter and a constant). The recorder counts a branch
// before the write in the first two only. peek's deferred unlock comes
// after no branch.
package main

import "sync"

type account struct {
	mu  sync.Mutex
	bal int
}

// check branches on its argument.
func check(v int) {
	if v < 0 {
		panic("overdrawn")
	}
}

// note branches on its argument too.
func note(v int) {
	if v > 1000 {
		println("large amount")
	}
}

func (a *account) withdraw(n int) {
	a.mu.Lock()
	b := a.bal
	a.mu.Unlock()
	check(b - n)
	a.mu.Lock()
	a.bal = b - n
	a.mu.Unlock()
}

func (a *account) balance() int {
	b := a.bal
	if b < 0 {
		return 0
	}
	return b
}

func (a *account) deposit(n int) {
	b := a.balance()
	a.mu.Lock()
	a.bal = b + n
	a.mu.Unlock()
}

func (a *account) add(n int) {
	a.mu.Lock()
	b := a.bal
	a.mu.Unlock()
	note(n)
	note(1)
	a.mu.Lock()
	a.bal = b + n
	a.mu.Unlock()
}

// peek reads the balance with the unlock deferred: the unlock runs at
// the return, past the if, which the read's stop already counted.
func (a *account) peek(floor int) int {
	a.mu.Lock()
	if floor < 0 {
		floor = 0
	}
	defer a.mu.Unlock()
	b := a.bal
	return b + floor
}

func main() {
	a := &account{bal: 100}
	a.withdraw(30)
	a.deposit(20)
	a.add(5)
	a.peek(1)
}
