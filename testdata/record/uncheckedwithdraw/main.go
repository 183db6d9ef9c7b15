// Program uncheckedwithdraw is checkedwithdraw without the check: the
// withdrawal writes back what it read minus the amount whatever it read,
// so had it read the balance before the deposit (run first, ordered by a
// pipe the trace does not record), the deposit would have been lost: a
// possible run, which avcheck run proves.
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
	a.mu.Lock()
	a.bal = b - n
	a.mu.Unlock()
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
