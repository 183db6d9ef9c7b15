package avrt

import (
	"context"
	"sync"
)

// Cancelable returns a function that takes what context.WithCancel (or
// WithTimeout, WithDeadline, WithTimeoutCause, WithDeadlineCause;
// CancelableCause for WithCancelCause)
// returned and gives it back with a cancel function that records the
// close of the context's Done channel before it cancels: a goroutine
// that receives from ctx.Done() then learns what the canceller did
// before it, as from any close. The rewritten call is
// avrt.Cancelable(site)(context.WithCancel(parent)).
//
// The close is recorded once, by the first call, and only if the
// context is not cancelled yet: a context that its deadline or its
// parent cancelled was closed where nothing recorded it.
func Cancelable(site uint32) func(context.Context, context.CancelFunc) (context.Context, context.CancelFunc) {
	return func(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
		if !enabled {
			return ctx, cancel
		}
		done := ctx.Done()
		var once sync.Once
		return ctx, func() {
			once.Do(func() {
				if ctx.Err() == nil {
					emit(KindClose, chanPtr(done), chanCap(done), site)
				}
			})
			cancel()
		}
	}
}
