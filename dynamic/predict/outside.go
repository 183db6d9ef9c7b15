package predict

import (
	"fmt"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file keeps at predicted what relies on an order the trace does not
// record: that of goroutines that code avcheck does not rewrite started.

// outsideOrder keeps the instances of a candidate whose order the trace
// records: those whose goroutines all descend from goroutines the
// recorder saw start, and, of a violation, those the run itself made in
// the pattern's order (its events' positions rise). A goroutine that
// code avcheck does not rewrite started (trace.OutsideG forks it: a
// net/http server's handler, a time.AfterFunc) is ordered with the
// others by synchronisation that is not recorded (the request it
// serves was sent after the test set up what it reads), so an
// interleaving predicted around it may be impossible. If no instance is
// kept, it says why, naming such a goroutine.
func (ix *patIndex) outsideOrder(t *trace.Trace, kind FindingKind, reps [][]uint32) ([][]uint32, string) {
	ix.outOnce.Do(func() { ix.outside = outsideGoroutines(t) })
	if len(ix.outside) == 0 {
		return reps, ""
	}
	var kept [][]uint32
	var first trace.GoID
	for _, r := range reps {
		g, out := trace.GoID(0), false
		for _, i := range r {
			if ix.outside[t.Events[i].G] {
				g, out = t.Events[i].G, true
				break
			}
		}
		if !out || kind != KindRace && rising(r) {
			kept = append(kept, r)
		} else if first == 0 {
			first = g
		}
	}
	if kept != nil {
		return kept, ""
	}
	why := fmt.Sprintf("g%d was started by code that avcheck does not rewrite (not a go statement it records, nor a test), so what orders it with the other goroutines there is not recorded", first)
	if kind != KindRace {
		why += ", and the run did not interleave them so"
	}
	return nil, why
}

// rising reports whether the events at the positions in r ran in that
// order.
func rising(r []uint32) bool {
	for i := 1; i < len(r); i++ {
		if r[i] <= r[i-1] {
			return false
		}
	}
	return true
}

// outsideGoroutines returns the goroutines that trace.OutsideG forked,
// and the goroutines they forked, transitively.
func outsideGoroutines(t *trace.Trace) map[trace.GoID]bool {
	out := map[trace.GoID]bool{}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind == trace.KindFork && (e.G == trace.OutsideG || out[e.G]) {
			out[trace.GoID(e.Arg)] = true
		}
	}
	return out
}
