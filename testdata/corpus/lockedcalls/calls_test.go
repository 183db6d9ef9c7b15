package lockedcalls

import (
	"fmt"
	"sync"
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestWork runs Work from two goroutines, one after the other.
func TestWork(t *testing.T) {
	var c Counter
	turn.Serial(func() { Work(&c) }, func() { Work(&c) })
	if got := c.Get(); got != 6 {
		t.Errorf("count %d, want 6", got)
	}
}

// TestShuffle runs Shuffle from two goroutines, one after the other.
func TestShuffle(t *testing.T) {
	a := &Account{bal: 200}
	turn.Serial(func() { Shuffle(a) }, func() { Shuffle(a) })
	if a.bal != 100 {
		t.Errorf("balance %d, want 100", a.bal)
	}
}

// TestReport logs from two goroutines, one after the other.
func TestReport(t *testing.T) {
	var c Counter
	var mu sync.Mutex
	var lines []string
	logf := func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	turn.Serial(func() { Report(&c, logf) }, func() { Report(&c, logf) })
	if len(lines) != 2 {
		t.Errorf("%d lines logged, want 2", len(lines))
	}
}

// TestReaders refreshes a table from two goroutines, directly and
// through the interface.
func TestReaders(t *testing.T) {
	tb := &Table{m: map[string]int{}}
	turn.Serial(func() { Refresh(tb, 1) }, func() { Through(tb, 2) })
	if got := tb.Lookup("a"); got != 2 {
		t.Errorf("a = %d, want 2", got)
	}
}
