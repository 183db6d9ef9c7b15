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

// TestCancelParent waits on a child of the context the worker cancels:
// the cancel closes the child's Done channel too.
func TestCancelParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	child, stop := context.WithCancel(parent)
	defer stop()
	b := &Box{}
	go Work(b, cancel)
	<-child.Done()
	b.V = 2
}

// TestAfterFunc: the function context.AfterFunc starts once the context
// is done runs after the worker's cancel.
func TestAfterFunc(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := &Box{}
	done := make(chan struct{})
	context.AfterFunc(ctx, func() {
		b.V = 3
		close(done)
	})
	go Work(b, cancel)
	<-done
}

// TestChildOfManual: the context package's goroutine reads the parent's
// Err once its Done channel is closed, and cancels the child, on which
// the test waits.
func TestChildOfManual(t *testing.T) {
	parent := NewManual()
	child, stop := context.WithCancel(parent)
	defer stop()
	b := &Box{}
	go func() {
		b.V = 1
		parent.Cancel(context.Canceled)
	}()
	<-child.Done()
	b.V = 2
	if child.Err() != context.Canceled {
		t.Fatal(child.Err())
	}
}

// TestCancelForms: arguments written over lines with a trailing comma,
// and arguments that are one call's results, are rewritten as well.
func TestCancelForms(t *testing.T) {
	ctx, cancel := context.WithTimeout(
		context.Background(),
		time.Hour, // a comment, with a comma
	)
	defer cancel()
	ctx2, cancel2 := context.WithTimeout(withHour(ctx))
	cancel2()
	<-ctx2.Done()
}

func withHour(ctx context.Context) (context.Context, time.Duration) { return ctx, time.Hour }
