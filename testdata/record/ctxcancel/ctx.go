// Package ctxcancel orders goroutines through context cancellation: a
// worker does its work and cancels, and the test waits on the context's
// Done channel before it goes on. The instrumenting recorder records the
// cancel as the close of the Done channel, so nothing is reported.
package ctxcancel

import "context"

// Box is shared between a worker and the test.
type Box struct{ V int }

// Work sets b.V and cancels the context, which ends the wait of whoever
// waits on it.
func Work(b *Box, cancel context.CancelFunc) {
	b.V = 1
	cancel()
}
