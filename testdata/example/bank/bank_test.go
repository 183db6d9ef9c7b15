package bank

import (
	"sync"
	"testing"
)

// TestTransfer withdraws concurrently. It usually passes: the violation
// needs an unlucky schedule, which is what avcheck predicts.
func TestTransfer(t *testing.T) {
	a := &Account{}
	a.Add(100)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Withdraw(60)
		}()
	}
	wg.Wait()
	if b := a.Balance(); b < 0 {
		t.Errorf("balance %d is negative", b)
	}
}
