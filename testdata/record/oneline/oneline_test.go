// Package oneline starts two goroutines from function literals on one
// line; each writes its own element, so nothing conflicts.
package oneline

import (
	"sync"
	"testing"
)

type pair struct {
	mu  sync.Mutex
	got [2]int
}

func TestOneLine(t *testing.T) {
	p := &pair{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { p.mu.Lock(); p.got[0] = 1; p.mu.Unlock(); wg.Done() }(); go func() { p.mu.Lock(); p.got[1] = 2; p.mu.Unlock(); wg.Done() }()
	wg.Wait()
	if p.got != [2]int{1, 2} {
		t.Fatal(p.got)
	}
}
