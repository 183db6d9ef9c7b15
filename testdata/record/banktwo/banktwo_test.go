// Package banktwo runs the bundled example's Withdraw with money enough
// for both withdrawals, so that even a serial run has both check-then-act
// sequences to interleave.
package banktwo

import (
	"sync"
	"testing"

	"github.com/avcheck/avcheck/testdata/example/bank"
)

func TestWithdrawTwice(t *testing.T) {
	a := &bank.Account{}
	a.Add(200)
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
