//go:build go1.25

package avrt

import "sync"

// WGGo records wg.Go(f), the add and the fork, and runs f in the
// goroutine that wg.Go starts, which records its start, f's Done and its
// end.
func WGGo(wg *sync.WaitGroup, f func(), site uint32) {
	if !enabled {
		wg.Go(f)
		return
	}
	emit(KindWGAdd, ptr(wg), 1, site)
	t := Fork(site)
	wg.Go(func() {
		Start(t)
		f()
		emit(KindWGDone, ptr(wg), 0, site)
		End()
	})
}
