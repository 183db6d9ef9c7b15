package avrt

import "reflect"

// The wrappers below replace the channel operations that the packages
// under test make through the reflect package, which the rewritten
// channel operations do not see: a receive that reflect.Select makes
// orders what the sender did before it, as a receive statement does.
// They are recorded as the statements they stand for: a send before it,
// a receive once it returned, a select's chosen case once it returned.

// Select calls sel, reflect.Select, and records the operation of the case
// it chose.
func Select(sel func([]reflect.SelectCase) (int, reflect.Value, bool), cases []reflect.SelectCase, site uint32) (int, reflect.Value, bool) {
	i, v, ok := sel(cases)
	if enabled {
		switch c := cases[i]; c.Dir {
		case reflect.SelectSend:
			emit(KindSent, uint64(c.Chan.Pointer()), uint64(c.Chan.Cap()), site)
		case reflect.SelectRecv:
			emit(KindRecv, uint64(c.Chan.Pointer()), uint64(c.Chan.Cap()), site)
		}
	}
	return i, v, ok
}

// ValueSend is ch.Send(x).
func ValueSend(ch, x reflect.Value, site uint32) {
	if enabled && ch.Kind() == reflect.Chan {
		emit(KindSend, uint64(ch.Pointer()), uint64(ch.Cap()), site)
	}
	ch.Send(x)
}

// ValueTrySend is ch.TrySend(x): a send that took place is recorded
// after it, as a select's.
func ValueTrySend(ch, x reflect.Value, site uint32) bool {
	ok := ch.TrySend(x)
	if enabled && ok {
		emit(KindSent, uint64(ch.Pointer()), uint64(ch.Cap()), site)
	}
	return ok
}

// ValueRecv is ch.Recv().
func ValueRecv(ch reflect.Value, site uint32) (reflect.Value, bool) {
	x, ok := ch.Recv()
	if enabled {
		emit(KindRecv, uint64(ch.Pointer()), uint64(ch.Cap()), site)
	}
	return x, ok
}

// ValueTryRecv is ch.TryRecv(): a receive that did not return for want of
// a message (an invalid x) is not recorded.
func ValueTryRecv(ch reflect.Value, site uint32) (reflect.Value, bool) {
	x, ok := ch.TryRecv()
	if enabled && x.IsValid() {
		emit(KindRecv, uint64(ch.Pointer()), uint64(ch.Cap()), site)
	}
	return x, ok
}

// ValueClose is ch.Close().
func ValueClose(ch reflect.Value, site uint32) {
	if enabled && ch.Kind() == reflect.Chan {
		emit(KindClose, uint64(ch.Pointer()), uint64(ch.Cap()), site)
	}
	ch.Close()
}
