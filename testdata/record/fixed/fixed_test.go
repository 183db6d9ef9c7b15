package fixed

import (
	"sync"
	"testing"
)

// TestWithdraw withdraws concurrently; nothing can be interleaved.
func TestWithdraw(t *testing.T) {
	a := &Account{}
	a.Deposit(200)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Withdraw(60)
		}()
	}
	wg.Wait()
}
