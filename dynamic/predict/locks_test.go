package predict

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// lockStates steps the whole trace and returns each event's lock state.
func lockStates(tr *trace.Trace) (*Locks, []HistoryID) {
	l := NewLocks()
	hs := make([]HistoryID, len(tr.Events))
	for i := range tr.Events {
		l.Step(&tr.Events[i])
		hs[i] = l.History(tr.Events[i].G)
	}
	return l, hs
}

func TestLocksets(t *testing.T) {
	tr := tt(t, `
		rw r
		1 acq m
		1 racq r
		1 rd x
		1 rrel r
		1 rel m
		2 racq r
		2 rd x
		2 rrel r
		3 acq r
		3 wr x
		3 rel r`)
	l, hs := lockStates(tr)
	ls := func(i int) LocksetID { return l.HistoryLockset(hs[i]) }
	if got := l.Locks(ls(2)); len(got) != 2 || got[0] != (LockHold{tr.Events[1].Obj, ModeRead}) || got[1] != (LockHold{tr.Events[0].Obj, ModeWrite}) {
		t.Fatalf("lockset at the first read: %v", got)
	}
	if ls(4) != 0 {
		t.Fatalf("lockset after releases: %v", l.Locks(ls(4)))
	}
	if l.Conflict(ls(2), ls(6)) {
		t.Error("two readers of r conflict")
	}
	if !l.Conflict(ls(2), ls(9)) || !l.Conflict(ls(6), ls(9)) {
		t.Error("reader and writer of r do not conflict")
	}
	if l.NonNested != 0 {
		t.Errorf("NonNested = %d", l.NonNested)
	}
}

func TestAcquisitionHistories(t *testing.T) {
	// Goroutine 1 holds m and took n after it; goroutine 2 holds n and took
	// m after it. Kahlon's condition (seed 004, Lemma 3) says they cannot be
	// at events 3 and 9 at once. Events 3 and 11 (2 holds nothing) are fine.
	tr := tt(t, `
		1 acq m
		1 acq n
		1 rel n
		1 rd x
		1 rel m
		2 acq n
		2 acq m
		2 rel m
		2 wr x
		2 rel n
		2 wr x`)
	l, hs := lockStates(tr)
	if l.Compatible(hs[3], hs[8]) {
		t.Error("incompatible histories reported compatible")
	}
	if !l.Compatible(hs[3], hs[10]) || !l.Compatible(hs[8], hs[4]) {
		t.Error("compatible histories reported incompatible")
	}
	after, ok := l.AcquiredAfter(hs[3], tr.Events[0].Obj)
	if !ok || after.Len() != 1 || after.Holds()[0].Obj != tr.Events[1].Obj {
		t.Errorf("history of m at event 3: %v %v", after, ok)
	}
	if h, ok := l.Outermost(1); ok {
		t.Errorf("goroutine 1 still holds %v", h)
	}
}

func TestAcquisitionHistoriesReadLocks(t *testing.T) {
	// As above, but m is only read-locked by both: the goroutines do not
	// block each other on m, so the states are compatible.
	tr := tt(t, `
		rw m
		1 racq m
		1 acq n
		1 rel n
		1 rd x
		1 rrel m
		2 acq n
		2 racq m
		2 rrel m
		2 wr x
		2 rel n`)
	l, hs := lockStates(tr)
	if !l.Compatible(hs[3], hs[8]) {
		t.Error("read-only cycle reported incompatible")
	}
}

func TestRecursiveAndForeignRelease(t *testing.T) {
	tr := tt(t, `
		rw r
		1 racq r
		1 racq r
		1 rrel r
		1 rd x
		1 rrel r
		1 acq m
		2 rel m
		1 rd x`)
	l := NewLocks()
	var at3, at7 int
	for i := range tr.Events {
		l.Step(&tr.Events[i])
		switch i {
		case 3:
			at3 = len(l.Held(1))
		case 7:
			at7 = len(l.Held(1))
		}
	}
	if at3 != 1 || at7 != 0 {
		t.Errorf("held: %d at event 3 (want 1), %d at event 7 (want 0)", at3, at7)
	}
	if l.NonNested != 1 {
		t.Errorf("NonNested = %d, want 1", l.NonNested)
	}
}

// describe renders lock state h of l as its held locks in acquisition
// order, each with its mode and acquisition history.
func describe(l *Locks, h HistoryID) string {
	var b strings.Builder
	for _, en := range l.histories[h].entries {
		after := slices.Clone(en.after.Holds())
		slices.SortFunc(after, func(a, b LockHold) int { return cmp.Compare(a.Obj, b.Obj) })
		after = slices.CompactFunc(after, func(a, b LockHold) bool { return a.Obj == b.Obj })
		for k := range after {
			after[k].Mode, _ = en.after.Find(after[k].Obj)
		}
		fmt.Fprintf(&b, "%d%s%v ", en.Obj, en.Mode, after)
	}
	return b.String()
}

// TestCovers checks Locks.Covers by hand and against its definition: on
// the lock states of random traces (nested Mutex and RWMutex locking, lock
// order inversions included), whenever a covers b, a is compatible with
// every state b is compatible with.
func TestCovers(t *testing.T) {
	tr := tt(t, `
		rw r
		1 acq m
		1 acq n
		1 rel n
		1 rd x
		1 rel m
		1 acq m
		1 rd x
		1 racq r
		1 rd x
		1 rrel r
		1 acq r
		1 rd x
		1 rel r
		1 rel m`)
	l, hs := lockStates(tr)
	mn, m, mr, mw := hs[3], hs[6], hs[8], hs[11]
	for _, c := range []struct {
		a, b HistoryID
		want bool
	}{
		{m, mn, true}, {mn, m, false}, {0, mn, true}, {mn, 0, false}, {m, m, true},
		{mr, mw, true}, {mw, mr, false}, {m, mw, true}, {mw, m, false},
	} {
		if got := l.Covers(c.a, c.b); got != c.want {
			t.Errorf("Covers(%s, %s) = %v, want %v", describe(l, c.a), describe(l, c.b), got, c.want)
		}
	}

	pairs := 0
	eachRandomLockTrace(8, func(tr *trace.Trace) {
		l, hs := lockStates(tr)
		states := slices.Compact(slices.Sorted(slices.Values(hs)))
		for _, a := range states {
			for _, b := range states {
				if a == b || !l.Covers(a, b) {
					continue
				}
				pairs++
				for _, x := range states {
					if l.Compatible(b, x) && !l.Compatible(a, x) {
						t.Fatalf("%s covers %s, but only the second is compatible with %s", describe(l, a), describe(l, b), describe(l, x))
					}
				}
			}
		}
	})
	if pairs == 0 {
		t.Fatal("no state covered another")
	}
}

// TestLocksCollect steps random traces collecting after every event, with
// nothing marked but the goroutines' current states, and checks that
// every event's lock state is the one computed without collecting: reused
// ids and dropped transitions lead to the right states.
func TestLocksCollect(t *testing.T) {
	forgot := 0
	eachRandomLockTrace(9, func(tr *trace.Trace) {
		want, hs := lockStates(tr)
		l := NewLocks()
		for i := range tr.Events {
			e := &tr.Events[i]
			l.Step(e)
			h := l.History(e.G)
			if got, w := describe(l, h), describe(want, hs[i]); got != w {
				t.Fatalf("event %d of\n%s\nstate %s, want %s", i, formatTrace(tr), got, w)
			}
			if l.HistoryLockset(h) != want.HistoryLockset(hs[i]) {
				t.Fatalf("event %d of\n%s\nlockset %v, want %v", i, formatTrace(tr), l.Locks(l.HistoryLockset(h)), want.Locks(want.HistoryLockset(hs[i])))
			}
			forgot += l.Collect(func(func(HistoryID)) {})
		}
	})
	if forgot == 0 {
		t.Fatal("nothing collected")
	}
}

// eachRandomLockTrace calls f on 300 random traces of three goroutines
// with nested locking over four locks, the last a RWMutex, lock order
// inversions included.
func eachRandomLockTrace(seed uint64, f func(tr *trace.Trace)) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for range 300 {
		if tr := randomTrace(rng, genConfig{goroutines: 3, vars: 1, locks: 4, items: 4}); tr != nil {
			f(tr)
		}
	}
}
