package ctxcancel

import (
	"context"
	"testing"
	"time"
)

// TestCancel waits on <-ctx.Done(), then writes what the worker wrote.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := &Box{}
	go Work(b, cancel)
	<-ctx.Done()
	b.V = 2
}

// TestCancelSelect waits in a select, with a timeout context whose
// cancel runs before its deadline.
func TestCancelSelect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b := &Box{}
	go Work(b, cancel)
	select {
	case <-ctx.Done():
		b.V = 2
	case <-time.After(time.Hour):
		t.Fatal("no cancel")
	}
}

// TestCancelCause: the cancel function of WithCancelCause, called with
// its cause, orders the same way.
func TestCancelCause(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	b := &Box{}
	go func() {
		b.V = 1
		cancel(context.Canceled)
	}()
	<-ctx.Done()
	b.V = 2
}
