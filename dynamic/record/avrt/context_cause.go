//go:build go1.20

package avrt

import (
	"context"
	"sync"
)

// CancelableCause is Cancelable for context.WithCancelCause, whose cancel
// function takes the cause (Go 1.20 and later).
func CancelableCause(site uint32) func(context.Context, context.CancelCauseFunc) (context.Context, context.CancelCauseFunc) {
	return func(ctx context.Context, cancel context.CancelCauseFunc) (context.Context, context.CancelCauseFunc) {
		if !enabled {
			return ctx, cancel
		}
		done := ctx.Done()
		var once sync.Once
		return ctx, func(cause error) {
			once.Do(func() {
				if ctx.Err() == nil {
					emit(KindClose, chanPtr(done), chanCap(done), site)
				}
			})
			cancel(cause)
		}
	}
}
