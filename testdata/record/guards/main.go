// Command guards makes the reads whose values the recorder bounds, and
// some it must not: each read's value is tested by a branch, written back,
// used as an array index, returned to a caller that tests it, or used for
// something else. It runs on one goroutine, so that every value read is
// known in advance.
package main

import (
	"fmt"
	"sync"
)

// Account is a balance that a withdrawal waits to cover.
type Account struct {
	mu      sync.Mutex
	balance int
}

// Withdraw takes amt once the balance covers it.
func (a *Account) Withdraw(amt int) {
	a.mu.Lock()
	for a.balance < amt {
		a.mu.Unlock()
		a.mu.Lock()
	}
	a.balance -= amt
	a.mu.Unlock()
}

// Print shows the balance: its read has no range.
func (a *Account) Print() {
	fmt.Println(a.balance)
}

// Log is a fixed buffer of entries.
type Log struct {
	buf [4]string
	n   int
}

// Write stores an entry, starting over when the buffer is full.
func (l *Log) Write(entry string) {
	n := l.n
	if n == len(l.buf) {
		n = 0
	}
	l.buf[n] = entry
	l.n = n + 1
}

// Queue is a list of events.
type Queue struct {
	mu     sync.Mutex
	events []string
}

// Size returns the number of events.
func (q *Queue) Size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.events)
}

func wait(q *Queue) {
	for q.Size() == 0 {
	}
}

func atLeast(q *Queue, k int) bool {
	if q.Size() >= k {
		return true
	}
	return false
}

func show(q *Queue) {
	fmt.Println(q.Size())
}

// Label is a name.
type Label struct {
	name string
}

// Long says whether the name is longer than three bytes.
func (l *Label) Long() bool {
	if len(l.name) > 3 {
		return true
	}
	return false
}

// Holder points to an account.
type Holder struct {
	cur *Account
}

// Show prints the balance of the account it points to: the read of the
// pointer records its value, the account's address.
func (h *Holder) Show() {
	fmt.Println(h.cur.balance)
}

func main() {
	a := &Account{balance: 110}
	a.Withdraw(10)
	a.Print()
	logs = &Log{}
	for _, e := range []string{"a", "b", "c", "d", "e"} {
		logs.Write(e)
	}
	q := &Queue{events: []string{"x"}}
	wait(q)
	atLeast(q, 2)
	show(q)
	label = &Label{name: "hello"}
	label.Long()
	holder = &Holder{cur: a}
	holder.Show()
}

// logs, label and holder are on the heap, as variables that goroutines
// share are: neither recorder records the accesses of a goroutine's own
// stack.
var (
	logs   *Log
	label  *Label
	holder *Holder
)
