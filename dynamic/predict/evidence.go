package predict

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/intent"
)

// This file checks that a violation touches what its region's evidence
// of intent is about (Intent, analyzers/regions/intent.go).

// outsideEvidence says why a violation whose accesses are the events acc
// breaks nothing that its region's evidence shows, or "" if it may. The
// evidence that follows a value (written back, deciding an access, read
// with another, read back) links the accesses at two sites: the region
// is meant to be atomic for what they reach. A region that runs calls
// with critical sections of their own (a fake clock's Advance, which
// reads the time, runs the due timers one critical section each, and
// writes the time back) is not meant to be atomic for what those calls
// reach, unless its evidence says so: a violation none of whose accesses
// reaches a variable of the name that the evidence's accesses reach
// stays predicted. Where one of the two sites was reached only through a
// call (v := c.Get()), the trace has no object at it, and the violation
// is kept.
func (ix *patIndex) outsideEvidence(t *trace.Trace, in Intent, acc []uint32) string {
	switch in.Evidence {
	case intent.WriteBack, intent.Branch, intent.ReadPair, intent.ReadBack:
	default:
		return ""
	}
	ix.evOnce.Do(func() { ix.evidenceObjects(t) })
	from, to := ix.evObjs[posOf(t, in.From)], ix.evObjs[posOf(t, in.To)]
	if len(from) == 0 || len(to) == 0 {
		return ""
	}
	names := make(map[string]bool)
	for _, o := range append(slices.Clip(from), to...) {
		names[t.Object(o).Name] = true
	}
	for _, i := range acc {
		if names[t.Object(t.Events[i].Obj).Name] {
			return ""
		}
	}
	// The region's own two accesses may be those of the evidence of a
	// region inside it, which the recorder does not give them to (each
	// event goes to its outermost region with evidence): withdraw's
	// write-back of a.bal, called in a goroutine whose region's evidence
	// is a branch on other variables.
	if ix.evPairs[[2]sitePos{posOf(t, t.Events[acc[0]].Site), posOf(t, t.Events[acc[len(acc)-1]].Site)}] {
		return ""
	}
	linked := slices.Sorted(maps.Keys(names))
	return fmt.Sprintf("its region is meant to be atomic for %s (%s, from %s to %s), which the violation does not access", strings.Join(linked, " and "), in.Evidence, siteLine(t, in.From), siteLine(t, in.To))
}

// sitePos is a site's position: a region's evidence names its sites
// apart from the accesses' own (trace.Event.Intent), so that a position
// may have two site ids.
type sitePos struct {
	file      string
	line, col int
}

func posOf(t *trace.Trace, s trace.SiteID) sitePos {
	st := t.Site(s)
	return sitePos{st.File, st.Line, st.Col}
}

// maxEvObjs bounds the objects kept per evidence position: one position
// is one expression, whose objects share a name but for a map's keys.
const maxEvObjs = 4

// evidenceObjects fills evObjs, in one pass over the accesses.
func (ix *patIndex) evidenceObjects(t *trace.Trace) {
	ix.evObjs = make(map[sitePos][]trace.ObjID)
	ix.evPairs = make(map[[2]sitePos]bool)
	for _, in := range ix.intents {
		for _, s := range []trace.SiteID{in.From, in.To} {
			if s != 0 {
				ix.evObjs[posOf(t, s)] = nil
			}
		}
		if in.From != 0 && in.To != 0 {
			ix.evPairs[[2]sitePos{posOf(t, in.From), posOf(t, in.To)}] = true
		}
	}
	if len(ix.evObjs) == 0 {
		return
	}
	// is[key] says whether the access key's site is at an evidence
	// position: 0 not known yet, 1 yes, 2 no.
	is := make([]uint8, len(ix.keys))
	for _, a := range ix.acc {
		if is[a.key] == 0 {
			is[a.key] = 2
			if _, ok := ix.evObjs[posOf(t, ix.keys[a.key].site)]; ok {
				is[a.key] = 1
			}
		}
		if is[a.key] != 1 {
			continue
		}
		p := posOf(t, ix.keys[a.key].site)
		objs, obj := ix.evObjs[p], ix.vars[a.v]
		if len(objs) < maxEvObjs && !slices.Contains(objs, obj) {
			ix.evObjs[p] = append(objs, obj)
		}
	}
}

// siteLine names site s by its file's base name and line.
func siteLine(t *trace.Trace, s trace.SiteID) string {
	st := t.Site(s)
	return fmt.Sprintf("%s:%d", filepath.Base(st.File), st.Line)
}

// outsideSection says why a violation of a region whose evidence is one
// critical section (intent.CriticalSection) breaks nothing that section
// protects, or "" if it may. A variable that every write updates under
// a lock of its own is guarded by that lock; if the region does not hold
// it from one of its accesses to the other, the region's own lock is not
// what keeps the variable whole, and its section says nothing of it
// (yamux's Write holds its send lock while it reads the stream's state,
// each time in a critical section of the state lock, which every write
// of the state holds). A variable that some write updates with no lock
// held is left to the search: its violation is also a race.
func (ix *patIndex) outsideSection(t *trace.Trace, in Intent, acc []uint32) string {
	if in.Evidence != intent.CriticalSection || len(acc) < 3 {
		return ""
	}
	ix.wlOnce.Do(ix.sectionGuards)
	first, last := ix.accAt(acc[0]), ix.accAt(acc[len(acc)-1])
	if first == nil || last == nil || first.v != last.v {
		return ""
	}
	guards := ix.writeLocks[first.v]
	if len(guards) == 0 {
		return ""
	}
	held := func(a *patAccess, lock trace.ObjID) bool {
		for _, h := range ix.locks.Locks(ix.locks.HistoryLockset(a.hist)) {
			if h.Obj == lock {
				return true
			}
		}
		return false
	}
	// released reports whether the region's goroutine releases lock
	// between its two accesses: they are then in two of its sections.
	g := t.Events[acc[0]].G
	released := func(lock trace.ObjID) bool {
		for i := acc[0] + 1; i < acc[len(acc)-1]; i++ {
			if e := &t.Events[i]; e.G == g && e.Obj == lock && (e.Kind == trace.KindRelease || e.Kind == trace.KindRRelease) {
				return true
			}
		}
		return false
	}
	for _, l := range guards {
		if held(first, l) && held(last, l) && !released(l) {
			return ""
		}
	}
	return fmt.Sprintf("its region is one critical section, and no lock it holds from one of its accesses to the other guards %s: every write of it holds %s, which the region releases between them",
		t.Object(t.Events[acc[0]].Obj).Name, t.Object(guards[0]).Name)
}

// accAt returns the access of event e, nil if it is none.
func (ix *patIndex) accAt(e uint32) *patAccess {
	i, ok := slices.BinarySearchFunc(ix.acc, e, func(a patAccess, e uint32) int { return cmp.Compare(a.ev, e) })
	if !ok {
		return nil
	}
	return &ix.acc[i]
}

// sectionGuards fills writeLocks: per variable, the locks every write of
// it holds for writing.
func (ix *patIndex) sectionGuards() {
	ix.writeLocks = make([][]trace.ObjID, len(ix.vars))
	seen := make([]bool, len(ix.vars))
	for i := range ix.acc {
		a := &ix.acc[i]
		if !a.write {
			continue
		}
		var held []trace.ObjID
		for _, h := range ix.locks.Locks(ix.locks.HistoryLockset(a.hist)) {
			if h.Mode == ModeWrite {
				held = append(held, h.Obj)
			}
		}
		if !seen[a.v] {
			seen[a.v] = true
			ix.writeLocks[a.v] = held
			continue
		}
		ix.writeLocks[a.v] = slices.DeleteFunc(ix.writeLocks[a.v], func(l trace.ObjID) bool { return !slices.Contains(held, l) })
	}
}

// rechecked says why a violation whose last access is a read that checks
// its variable again (trace.Rechecks: in a critical section, to decide
// a write of it there, double-checked locking's second check) breaks
// nothing, or "" if it may: what the region does from that read on rests
// on its value, not on the first access's, so another goroutine's write
// between them is seen, and acted on, where it matters. A region whose
// evidence is that the two reads' values are used together (read-pair)
// is left to the search.
func rechecked(t *trace.Trace, in Intent, acc []uint32) string {
	if len(acc) != 3 || in.Evidence == intent.ReadPair {
		return ""
	}
	last := &t.Events[acc[2]]
	if last.Kind != trace.KindRead || last.Flags&trace.Rechecks == 0 {
		return ""
	}
	return fmt.Sprintf("its last read, at %s, checks %s again in a critical section, and its value decides the write there: what follows rests on it, not on the first access",
		siteLine(t, last.Site), t.Object(last.Obj).Name)
}
