package splitpush

import (
	"sync"
	"testing"
)

// TestPush pushes from two goroutines, each keeping what Push returns.
// Recorded serially or not, the trace admits the interleaving that loses
// a node.
func TestPush(t *testing.T) {
	var s Stack
	var got [2]int
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = s.Push(i + 1)
		}()
	}
	wg.Wait()
	if got != [2]int{1, 2} {
		t.Errorf("pushed %v", got)
	}
}

// TestLog appends from two goroutines: an appended value can be lost.
func TestLog(t *testing.T) {
	var s Stack
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Log(i + 1)
		}()
	}
	wg.Wait()
}
