package avrt

import (
	"context"
	"sync"
)

// Cancelable returns a function that takes what context.WithCancel (or
// WithTimeout, WithDeadline, WithTimeoutCause, WithDeadlineCause;
// CancelableCause for WithCancelCause) returns and gives it back with a
// cancel function that records the close of the context's Done channel
// before it cancels: a goroutine that receives from ctx.Done() then
// learns what the canceller did before it, as from any close. The
// rewritten call is avrt.Cancelable(site)(context.WithCancel(parent)).
func Cancelable(site uint32) func(context.Context, context.CancelFunc) (context.Context, context.CancelFunc) {
	return func(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
		if !enabled {
			return ctx, cancel
		}
		closing := cancelRecorder(ctx, site)
		return ctx, func() {
			closing()
			cancel()
		}
	}
}

// cancelRecorder returns the function a wrapped cancel calls first: it
// records the close of ctx's Done channel once, by the first call, and
// only if the context is not cancelled yet: a context that its deadline
// or its parent cancelled was closed where nothing recorded it.
//
// It first records the making of the Done channel, which the context
// package makes where no probe is: a context made where a collected
// one's channel was is another channel, not that one, closed long ago.
// A context not cancelled yet has just made its channel in the Done call
// above; one already cancelled may share the package's one closed
// channel, which is made once for all.
func cancelRecorder(ctx context.Context, site uint32) func() {
	done := ctx.Done()
	if ctx.Err() == nil {
		emit(KindMakeChan, chanPtr(done), chanCap(done), site)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if ctx.Err() == nil {
				emit(KindClose, chanPtr(done), chanCap(done), site)
			}
		})
	}
}
