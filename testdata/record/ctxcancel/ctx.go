// Package ctxcancel orders goroutines through context cancellation: a
// worker does its work and cancels, and the test waits on the context's
// Done channel before it goes on. The instrumenting recorder records the
// cancel as the close of the Done channel, and of the channels of the
// contexts made from it, so nothing is reported.
package ctxcancel

import (
	"context"
	"sync"
	"time"
)

// Box is shared between a worker and the test.
type Box struct{ V int }

// Work sets b.V and cancels the context, which ends the wait of whoever
// waits on it.
func Work(b *Box, cancel context.CancelFunc) {
	b.V = 1
	cancel()
}

// Manual is a context of the program's own, cancelled under its lock:
// the context package knows nothing of it, so a context made from it is
// cancelled by a goroutine of the package's, which waits on Done and
// then asks Err.
type Manual struct {
	mu   sync.Mutex
	done chan struct{}
	err  error
}

// NewManual returns a Manual not cancelled yet.
func NewManual() *Manual { return &Manual{done: make(chan struct{})} }

func (c *Manual) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *Manual) Done() <-chan struct{}       { return c.done }
func (c *Manual) Value(any) any               { return nil }

// Err is read after Done is closed, as the context contract says: the
// close orders it after the write.
func (c *Manual) Err() error { return c.err }

// Cancel sets the error and closes Done, once.
func (c *Manual) Cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
}
