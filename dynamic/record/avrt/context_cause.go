//go:build go1.20

package avrt

import "context"

// CancelableCause is Cancelable for context.WithCancelCause, whose cancel
// function takes the cause (Go 1.20 and later).
func CancelableCause(site uint32) func(context.Context, context.CancelCauseFunc) (context.Context, context.CancelCauseFunc) {
	return func(ctx context.Context, cancel context.CancelCauseFunc) (context.Context, context.CancelCauseFunc) {
		if !enabled {
			return ctx, cancel
		}
		closing := cancelRecorder(ctx, site)
		return ctx, func(cause error) {
			closing()
			cancel(cause)
		}
	}
}
