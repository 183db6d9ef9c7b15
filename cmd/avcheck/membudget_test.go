package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The predictions of avcheck test hold at most the budget at once: a
// reservation waits while the others hold too much, goes on when one gives
// its memory back, and one larger than the whole budget runs alone.
func TestMemBudget(t *testing.T) {
	b := newMemBudget(100)
	ctx := context.Background()
	r1, _ := b.acquire(ctx, 60)
	r2, _ := b.acquire(ctx, 40) // 100 in all: fits
	got := make(chan func(), 1)
	go func() {
		r, _ := b.acquire(ctx, 30)
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a reservation went on past the budget")
	case <-time.After(50 * time.Millisecond):
	}
	r1()
	r1() // once only: the second call gives nothing back
	var r3 func()
	select {
	case r3 = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("a reservation did not go on once the memory was free")
	}
	if b.used != 70 {
		t.Errorf("%d bytes held, want 70", b.used)
	}
	r2()
	r3()
	// Larger than the budget: capped, and it runs alone.
	big, _ := b.acquire(ctx, 1000)
	if b.used != 100 {
		t.Errorf("%d bytes held by a reservation larger than the budget, want 100", b.used)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.acquire(cctx, 1); err == nil {
		t.Error("a reservation of a stopped run waited for nothing and went on")
	}
	big()
	if b.used != 0 {
		t.Errorf("%d bytes held at the end, want 0", b.used)
	}
}

func TestMemTotal(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int64{
		"MemTotal:       24579896 kB\nMemFree:         1000 kB\n": 24579896 << 10,
		"MemFree:         1000 kB\n":                              0,
		"MemTotal:       lots kB\n":                               0,
		"MemTotal:       1000 MB\n":                               0,
	} {
		path := filepath.Join(dir, "meminfo")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := memTotal(path); got != want {
			t.Errorf("memTotal(%q) = %d, want %d", content, got, want)
		}
	}
	if got := memTotal(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("memTotal of no file = %d, want 0", got)
	}
}
