//go:build go1.20

package avrt

import "context"

// DeriveCause is Derive for context.WithCancelCause, whose cancel
// function takes the cause (Go 1.20 and later).
func DeriveCause(fn func(context.Context) (context.Context, context.CancelCauseFunc), parent context.Context, site uint32) (context.Context, context.CancelCauseFunc) {
	if !enabled {
		return fn(parent)
	}
	p, pdone := parentFor(parent, site)
	ctx, cancel := fn(p)
	node := register(ctx, pdone, site)
	return ctx, func(cause error) {
		closeCtx(node)
		cancel(cause)
	}
}

// CancelableCause is Cancelable for context.WithCancelCause.
func CancelableCause(site uint32) func(context.Context, context.CancelCauseFunc) (context.Context, context.CancelCauseFunc) {
	return func(ctx context.Context, cancel context.CancelCauseFunc) (context.Context, context.CancelCauseFunc) {
		if !enabled {
			return ctx, cancel
		}
		node := register(ctx, 0, site)
		return ctx, func(cause error) {
			closeCtx(node)
			cancel(cause)
		}
	}
}
