// Program checkedwithdraw withdraws from an account in two critical
// sections, checking the balance read before it writes the difference
// back, while another goroutine deposits. The deposit runs first: the
// pipe orders the run without an event the trace records, as if the
// goroutines had happened to run in that order. Had the withdrawal read
// the balance before the deposit, it would have read 0 and check would
// have panicked before the write: the lost deposit (a read, a write
// between, the write back) is no possible run of this program.
package main

import (
	"os"
	"sync"
)

type account struct {
	mu  sync.Mutex
	bal int
}

func (a *account) deposit(n int) {
	a.mu.Lock()
	a.bal += n
	a.mu.Unlock()
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

func check(v int) {
	if v < 0 {
		panic("overdrawn")
	}
}

func main() {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	a := &account{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.deposit(100)
		if _, err := w.Write([]byte{1}); err != nil {
			panic(err)
		}
	}()
	go func() {
		defer wg.Done()
		if _, err := r.Read(make([]byte, 1)); err != nil {
			panic(err)
		}
		a.withdraw(60)
	}()
	wg.Wait()
}
