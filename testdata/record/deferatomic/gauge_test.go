// Package deferatomic counts a task in with an atomic add and out with a
// deferred one: the deferred add runs when the function returns, and the
// instrumented build must keep it so.
package deferatomic

import (
	"sync/atomic"
	"testing"
)

type gauge struct{ n atomic.Int64 }

func (g *gauge) enter(f func()) {
	g.n.Add(1)
	defer g.n.Add(-1)
	f()
}

var active int64

func enterFunc(f func()) {
	atomic.AddInt64(&active, 1)
	defer atomic.AddInt64(&active, -1)
	f()
}

func TestDeferredAdd(t *testing.T) {
	var g gauge
	g.enter(func() {
		if got := g.n.Load(); got != 1 {
			t.Errorf("inside the call the gauge is %d, want 1", got)
		}
	})
	if got := g.n.Load(); got != 0 {
		t.Errorf("after the call the gauge is %d, want 0", got)
	}
	enterFunc(func() {
		if got := atomic.LoadInt64(&active); got != 1 {
			t.Errorf("inside the call active is %d, want 1", got)
		}
	})
}
