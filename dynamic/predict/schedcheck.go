package predict

import (
	"fmt"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file validates witnesses. It shares nothing with the search in
// witness.go beyond the trace's lookup tables: it replays the schedule
// event by event against the rules of the Go runtime as the trace records
// them, so a bug in the search's enabling conditions shows up here as a
// rejected witness instead of a reported false schedule (PECAN,
// shared/seeds/003_50220ead9b146295.txt, section 6.3 prunes false reports
// by replay; this is the static half of that).

// validateSchedule checks that running the trace's events before from in
// trace order, then sched, is a possible execution, and that it exhibits
// g: the targets in order, the last one last, back to back for a race.
// p is moved to from.
func validateSchedule(m *syncMeta, p *prefixState, from uint32, sched []uint32, g witnessGoal) error {
	t := m.t
	p.advance(from)
	writer := make(map[trace.ObjID]trace.GoID)
	readers := make(map[trace.ObjID]int)
	for _, obj := range m.stateObjs {
		if g, ok := p.writerOf(obj); ok {
			writer[obj] = g
		}
		if n := p.readHolds(obj); n > 0 {
			readers[obj] = int(n)
		}
	}
	wg := make(map[trace.ObjID]int64)
	done := make(map[uint32]bool, len(sched))
	ran := func(e uint32) bool { return e < from || done[e] }
	// next[g] is the next event goroutine g must run: its first event at
	// or after from, then each following one.
	next := make(map[trace.GoID]uint32)
	nextOf := func(g trace.GoID, after uint32) uint32 {
		for i := after; i < uint32(len(t.Events)); i++ {
			if t.Events[i].G == g {
				return i
			}
		}
		return uint32(len(t.Events))
	}
	lastSend := make(map[trace.GoID]uint32) // goroutine -> its send that has not completed
	for step, e := range sched {
		if int(e) >= len(t.Events) {
			return fmt.Errorf("step %d: no event %d", step, e)
		}
		ev := &t.Events[e]
		want, ok := next[ev.G]
		if !ok {
			want = nextOf(ev.G, from)
		}
		if e != want {
			return fmt.Errorf("step %d: g%d runs event %d out of program order (next is %d)", step, ev.G, e, want)
		}
		if _, first := next[ev.G]; !first {
			if f, ok := m.forkOf[ev.G]; ok && !ran(f) {
				return fmt.Errorf("step %d: g%d runs before the go statement that starts it", step, ev.G)
			}
		}
		if s, ok := lastSend[ev.G]; ok {
			se := &t.Events[s]
			if c, ok := m.chanCap(se.Obj); ok && se.Arg > c {
				if r, ok := m.recvIdx[[2]uint64{uint64(se.Obj), se.Arg - c}]; ok && !ran(r) {
					return fmt.Errorf("step %d: g%d's send of message %d completes before message %d is received", step, ev.G, se.Arg, se.Arg-c)
				}
			}
			delete(lastSend, ev.G)
		}
		switch ev.Kind {
		case trace.KindAcquire:
			if h, ok := writer[ev.Obj]; ok {
				return fmt.Errorf("step %d: g%d locks a mutex g%d holds", step, ev.G, h)
			}
			if readers[ev.Obj] > 0 {
				return fmt.Errorf("step %d: g%d locks a mutex held for reading", step, ev.G)
			}
			writer[ev.Obj] = ev.G
		case trace.KindRelease:
			// By its holder, or by another goroutine (a lock handed
			// over), as Go allows.
			if _, ok := writer[ev.Obj]; !ok {
				return fmt.Errorf("step %d: g%d unlocks a mutex no goroutine holds", step, ev.G)
			}
			delete(writer, ev.Obj)
		case trace.KindRAcquire:
			if h, ok := writer[ev.Obj]; ok {
				return fmt.Errorf("step %d: g%d read-locks a mutex g%d holds", step, ev.G, h)
			}
			readers[ev.Obj]++
		case trace.KindRRelease:
			readers[ev.Obj]--
		case trace.KindSend:
			lastSend[ev.G] = e
		case trace.KindRecv:
			if ev.Arg == 0 {
				if c, ok := m.closeOf[ev.Obj]; ok && !ran(c) {
					return fmt.Errorf("step %d: g%d receives from a channel that is not closed yet", step, ev.G)
				}
			} else if s, ok := m.sendIdx[[2]uint64{uint64(ev.Obj), ev.Arg}]; ok && !ran(s) {
				return fmt.Errorf("step %d: g%d receives message %d before it is sent", step, ev.G, ev.Arg)
			}
		case trace.KindWGAdd:
			wg[ev.Obj] += int64(ev.Arg)
		case trace.KindWGDone:
			wg[ev.Obj]--
		case trace.KindWGWait:
			if p.wgCounter(ev.Obj)+wg[ev.Obj] != 0 {
				return fmt.Errorf("step %d: g%d's WaitGroup.Wait returns with a non-zero counter", step, ev.G)
			}
		case trace.KindCondWait:
			// A woken Wait still follows every notification recorded
			// before it.
			for i := from; i < e; i++ {
				o := &t.Events[i]
				if o.Obj == ev.Obj && !ran(i) && (o.Kind == trace.KindCondSignal || o.Kind == trace.KindCondBroadcast) {
					return fmt.Errorf("step %d: g%d's Cond.Wait returns before the notification at event %d", step, ev.G, i)
				}
			}
		case trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW:
			// Each atomic operation must observe what it observed in the
			// trace: conflicting operations on one address (one of them
			// writes) keep their recorded order.
			reads := ev.Kind != trace.KindAtomicStore
			writes := ev.Kind != trace.KindAtomicLoad
			for i := from; i < e; i++ {
				o := &t.Events[i]
				if o.Obj != ev.Obj || ran(i) {
					continue
				}
				oReads := o.Kind == trace.KindAtomicLoad || o.Kind == trace.KindAtomicRMW
				oWrites := o.Kind == trace.KindAtomicStore || o.Kind == trace.KindAtomicRMW
				if reads && oWrites || writes && (oReads || oWrites) {
					return fmt.Errorf("step %d: g%d's %s changes what event %d observed", step, ev.G, ev.Kind, i)
				}
			}
		case trace.KindOnceDo:
			if ev.Arg == 0 {
				if o, ok := m.onceRan[ev.Obj]; ok && !ran(o) {
					return fmt.Errorf("step %d: g%d's Once.Do returns before the call that runs the function", step, ev.G)
				}
			}
		}
		done[e] = true
		next[ev.G] = nextOf(ev.G, e+1)
	}
	// The violation itself.
	if len(sched) == 0 || sched[len(sched)-1] != g.targets[len(g.targets)-1] {
		return fmt.Errorf("the schedule does not end with the violation's last access")
	}
	pos := make(map[uint32]int, len(sched))
	for i, e := range sched {
		pos[e] = i
	}
	prev := -1
	for _, x := range g.targets {
		i, ok := pos[x]
		if !ok {
			return fmt.Errorf("the schedule does not run event %d of the violation", x)
		}
		if i <= prev {
			return fmt.Errorf("the schedule runs the violation's accesses out of order")
		}
		if g.adjacent && prev >= 0 && i != prev+1 {
			return fmt.Errorf("the race's accesses are not back to back")
		}
		prev = i
	}
	return nil
}
