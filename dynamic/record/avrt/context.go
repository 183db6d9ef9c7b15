package avrt

import (
	"context"
	"reflect"
	"sync"
)

// The context package orders goroutines where no probe is: a cancel
// closes the context's Done channel and those of the contexts made from
// it, and a goroutine of the package's own waits for a parent of a type
// it does not know to be done, then asks its Err and cancels the
// children. The wrappers below record those orders as the close of each
// Done channel by the canceller, before the cancel, and the receive from
// a parent's Done channel by whoever learns through Err that it is
// closed; the receives from ctx.Done() that the program makes are
// recorded by their own probes.

// ctxNode is a cancelable context that a rewritten call made and whose
// close is not recorded yet.
type ctxNode struct {
	ctx    context.Context
	done   <-chan struct{}
	parent uint64 // the address of the parent's Done channel, 0 for none
	site   uint32
}

// ctxs holds the contexts whose close is not recorded yet, by the
// address of their parent's Done channel. A context leaves it when its
// cancel runs or its parent's close is recorded; one whose cancel is
// never called stays, as the context package keeps it in its parent.
var ctxs struct {
	sync.Mutex
	children map[uint64]map[*ctxNode]struct{}
}

// Derive makes a cancelable context with fn (context.WithCancel) and
// gives it back with a cancel function that records the closes it makes.
// The rewritten call is avrt.Derive(context.WithCancel, parent, site).
func Derive(fn func(context.Context) (context.Context, context.CancelFunc), parent context.Context, site uint32) (context.Context, context.CancelFunc) {
	if !enabled {
		return fn(parent)
	}
	p, pdone := parentFor(parent, site)
	ctx, cancel := fn(p)
	node := register(ctx, pdone, site)
	return ctx, func() {
		closeCtx(node)
		cancel()
	}
}

// Derive1 is Derive for context.WithTimeout and WithDeadline.
func Derive1[A any](fn func(context.Context, A) (context.Context, context.CancelFunc), parent context.Context, a A, site uint32) (context.Context, context.CancelFunc) {
	return Derive(func(p context.Context) (context.Context, context.CancelFunc) { return fn(p, a) }, parent, site)
}

// Derive2 is Derive for context.WithTimeoutCause and WithDeadlineCause.
func Derive2[A, B any](fn func(context.Context, A, B) (context.Context, context.CancelFunc), parent context.Context, a A, b B, site uint32) (context.Context, context.CancelFunc) {
	return Derive(func(p context.Context) (context.Context, context.CancelFunc) { return fn(p, a, b) }, parent, site)
}

// AfterFunc arranges f's call after ctx is done with fn
// (context.AfterFunc), f first recording the receive from ctx's Done
// channel that the context package made before it started f.
func AfterFunc(fn func(context.Context, func()) func() bool, ctx context.Context, f func(), site uint32) func() bool {
	if !enabled || ctx == nil || f == nil {
		return fn(ctx, f)
	}
	return fn(ctx, func() {
		receivedIfClosed(ctx.Done(), site)
		f()
	})
}

// Cancelable returns a function that takes what context.WithCancel (or
// WithTimeout, WithDeadline, WithTimeoutCause, WithDeadlineCause;
// CancelableCause for WithCancelCause) returns and gives it back with a
// cancel function that records the close of the context's Done channel
// before it cancels, as Derive does, but without the contexts made from
// it: the rewritten call is avrt.Cancelable(site)(context.WithCancel(f()))
// where the arguments are one call's results.
func Cancelable(site uint32) func(context.Context, context.CancelFunc) (context.Context, context.CancelFunc) {
	return func(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
		if !enabled {
			return ctx, cancel
		}
		node := register(ctx, 0, site)
		return ctx, func() {
			closeCtx(node)
			cancel()
		}
	}
}

// afterFuncer is a context of the program's that arranges calls after it
// is done by itself, which the context package uses in place of a
// goroutine of its own.
type afterFuncer interface {
	AfterFunc(func()) func() bool
}

// parentFor returns the parent to give the context package for parent,
// and the address of parent's Done channel (0 for none). A parent of a
// type of the program's comes back behind a foreignParent, unless the
// package will not start a goroutine for it.
func parentFor(parent context.Context, site uint32) (context.Context, uint64) {
	if parent == nil {
		return nil, 0
	}
	done := parent.Done()
	if done == nil {
		return parent, 0
	}
	if _, ok := parent.(afterFuncer); ok {
		return parent, chanPtr(done)
	}
	t := reflect.TypeOf(parent)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "context" {
		return parent, chanPtr(done)
	}
	return &foreignParent{Context: parent, done: done, site: site}, chanPtr(done)
}

// foreignParent is a parent of a type of the program's as the context
// package sees it. Everything is the parent's, but Err, which the
// package's goroutine asks once it received from Done, and before it
// cancels the children: Err records that receive, and the closes of the
// children, if Done is closed.
type foreignParent struct {
	context.Context
	done <-chan struct{}
	site uint32
}

func (p *foreignParent) Err() error {
	if receivedIfClosed(p.done, p.site) {
		closeChildren(chanPtr(p.done))
	}
	return p.Context.Err()
}

// String names the parent as the context package would without the
// wrapper, in the names of the contexts made from it.
func (p *foreignParent) String() string {
	if s, ok := p.Context.(interface{ String() string }); ok {
		return s.String()
	}
	return reflect.TypeOf(p.Context).String()
}

// receivedIfClosed records a receive from done if it is closed, and
// reports whether it is.
func receivedIfClosed(done <-chan struct{}, site uint32) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		emit(KindRecv, chanPtr(done), 0, site)
		return true
	default:
		return false
	}
}

// register records the making of ctx's Done channel, which the context
// package makes where no probe is, and keeps ctx as a child of the
// context whose Done channel is at pdone. A context made where a
// collected one's channel was is another channel, not that one, closed
// long ago. A context not cancelled yet has just made its channel in the
// Done call below; one already cancelled (its parent was) may share the
// package's one closed channel, which is made once for all, and is not
// kept.
func register(ctx context.Context, pdone uint64, site uint32) *ctxNode {
	done := ctx.Done()
	if done == nil || ctx.Err() != nil {
		return nil
	}
	emit(KindMakeChan, chanPtr(done), 0, site)
	n := &ctxNode{ctx: ctx, done: done, parent: pdone, site: site}
	ctxs.Lock()
	defer ctxs.Unlock()
	if ctxs.children == nil {
		ctxs.children = map[uint64]map[*ctxNode]struct{}{}
	}
	set := ctxs.children[pdone]
	if set == nil {
		set = map[*ctxNode]struct{}{}
		ctxs.children[pdone] = set
	}
	set[n] = struct{}{}
	return n
}

// closeCtx records the close of n's Done channel and of its children's,
// once, by the first call of its cancel, before the cancel closes them.
// A context that its deadline cancelled was closed where nothing
// recorded it, and so were its children.
func closeCtx(n *ctxNode) {
	if n == nil {
		return
	}
	ctxs.Lock()
	defer ctxs.Unlock()
	set := ctxs.children[n.parent]
	if _, ok := set[n]; !ok {
		return // recorded, or cancelled with its parent
	}
	delete(set, n)
	if len(set) == 0 {
		delete(ctxs.children, n.parent)
	}
	closeLocked(n)
}

// closeChildren records the closes of the contexts made from the parent
// whose Done channel is at pdone, which the context package is about to
// cancel.
func closeChildren(pdone uint64) {
	ctxs.Lock()
	defer ctxs.Unlock()
	set := ctxs.children[pdone]
	delete(ctxs.children, pdone)
	for n := range set {
		closeLocked(n)
	}
}

// closeLocked records the close of n, out of its parent's set already,
// and of its children, parents first; ctxs is locked.
func closeLocked(n *ctxNode) {
	done := chanPtr(n.done)
	set := ctxs.children[done]
	delete(ctxs.children, done)
	if n.ctx.Err() != nil {
		return // closed where nothing recorded it, with its children
	}
	emit(KindClose, done, 0, n.site)
	for c := range set {
		closeLocked(c)
	}
}
