package record

import (
	"fmt"
	"strings"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
)

// Accesses that synchronisation operations also make.
//
// The race detector takes some synchronisation operations for memory
// accesses too (runtime/chan.go, runtime/race.go), and so does the
// recorder, so that the predictors, which find races and atomicity
// violations among reads and writes, see the conflicts they make:
//
//   - a send on a channel reads the channel, and its close writes it:
//     racereadpc and racewritepc of the channel's race address in chansend
//     and closechan. A close that another goroutine's send may follow, or
//     precede with nothing ordering them, is a race (the send panics if it
//     comes second). The recorder records, right before the send (and the
//     close), a read (a write) of a variable of the channel's own, named as
//     the channel is; a receive is not an access of it;
//   - a sync/atomic operation accesses its variable: a load reads it, a
//     store or read-modify-write writes it, and a plain access of the same
//     variable that nothing orders with it is a race; two atomic
//     operations never race with each other. The recorder records, next to
//     the atomic event (which stays the synchronisation it was), a plain
//     read or write of the variable, the two inside a critical section of
//     a lock of the variable's own (named "atomic " and the variable's
//     name), which only atomic operations take: two atomic accesses hold
//     it both and cannot be at the same time, while a plain one holds it
//     not: the lockset half of PECAN's hybrid constraint (shared/seeds/
//     003_..., section 4.2: two events race when happens-before does not
//     order them and their lock states allow them to be at the same
//     time). The lock is a mutex of the trace, whose critical sections
//     the predictors reorder freely (pattern.go), so it adds no
//     happens-before edge that the atomic events do not make. A store's
//     access comes before its event (a release, which publishes it), a
//     load's and a read-modify-write's after theirs (acquires). The event
//     is inside the critical section too, so that the access goes where
//     its event goes: an order of the atomic operations (the precise
//     stage keeps theirs as recorded) orders their accesses. Outside it,
//     a read-modify-write's access could be placed after a later load
//     that read what it wrote, between that load and the loading
//     goroutine's CompareAndSwap (a retry loop), as a lost update. These
//     three events are outside every region: the access counts for races,
//     and as the interleaved access of a triplet (a plain read and write
//     of a variable split by an atomic add), but not as one of a region's
//     own. Otherwise a check followed by an atomic counter's add
//     (getorsetfix: a miss, then nextRef.Add(1), then a re-check under
//     the lock) is an atomic-set violation over the checked variable and
//     the counter, which the re-check makes harmless.

// chanStateKey stands for a channel's own variable in a mapElemKey whose
// m is the channel's trace id.
const chanStateKey = "<-chan"

// atomicLockKey stands for an atomic variable's lock in a mapElemKey
// whose m is the variable's address.
const atomicLockKey = "<-atomic"

// chanAccess records the access that a send (a read) or a close (a
// write) of the channel makes of the channel's own variable, right before
// the send or close event.
func (r *recorder) chanAccess(gs *gstate, st *chanState, site trace.SiteID, write bool) {
	name := r.t.Objects[st.id].Name
	if name == "" {
		name = fmt.Sprintf("chan@%#x", uint64(st.id))
	}
	v := r.derivedID(mapElemKey{m: uint64(st.id), key: chanStateKey}, trace.Object{Kind: trace.ObjVar, Name: name})
	e := trace.Event{Kind: trace.KindRead, Obj: v, Site: site}
	if write {
		e.Kind = trace.KindWrite
	}
	r.emit(gs, e)
}

// emitAtomic records an atomic operation's event with the plain access
// it also makes, both inside the variable's own critical section.
func (r *recorder) emitAtomic(gs *gstate, e trace.Event) {
	name := r.t.Objects[e.Obj].Name
	lock := r.derivedID(mapElemKey{m: uint64(e.Obj), key: atomicLockKey}, trace.Object{Kind: trace.ObjMutex, Name: "atomic " + name})
	for _, x := range atomicEvents(e, lock) {
		r.emitIn(gs, x.e, x.inRegion)
	}
}

// regionEvent is an event to record, and whether it is in the
// goroutine's open region.
type regionEvent struct {
	e        trace.Event
	inRegion bool
}

// atomicEvents returns the events that record atomic operation e, in
// their order: the acquire of the variable's own lock, e and the plain
// access it makes (the access first for a store), and the release. Only
// e is in the goroutine's region, unless it is trace.Outside.
func atomicEvents(e trace.Event, lock trace.ObjID) [4]regionEvent {
	a := trace.Event{Kind: trace.KindWrite, Obj: e.Obj, Site: e.Site, Flags: trace.Outside}
	if e.Kind == trace.KindAtomicLoad {
		a.Kind = trace.KindRead
	}
	first, second := regionEvent{e, e.Flags&trace.Outside == 0}, regionEvent{a, false}
	if e.Kind == trace.KindAtomicStore {
		first, second = second, first
	}
	return [4]regionEvent{
		{trace.Event{Kind: trace.KindAcquire, Obj: lock, Site: e.Site}, false},
		first, second,
		{trace.Event{Kind: trace.KindRelease, Obj: lock, Site: e.Site}, false},
	}
}

// A plain access of a struct or array value (s := c.stats, c.stats =
// Stats{}) accesses each of its fields and elements, which the trace
// identifies by their addresses, so that an access of one field (an
// atomic add of c.stats.Writes) conflicts with it as in the race
// detector, which checks every byte of a copy. The recorder records one
// access at the value's address, which is its first leaf's, and one more
// at each further leaf's (a field or element that is not itself a struct
// or an array), up to maxLeaves; the fields of a sync type (a Mutex, a
// WaitGroup, held by value) are the recorder's synchronisation objects
// and are left out.

// maxLeaves bounds the accesses recorded for one access of a struct or
// array value; the leaves past it are not recorded.
const maxLeaves = 16

// leaf is a field or element of a struct or array value.
type leaf struct {
	off  int64  // from the value's address
	name string // as a selector or index after the value's expression
}

// leaves returns the leaves of a value of type t but the one at its
// address, at most maxLeaves in all; none for a type that is neither a
// struct nor an array.
func leaves(t godwarf.Type) []leaf {
	var out []leaf
	var walk func(t godwarf.Type, off int64, name string)
	walk = func(t godwarf.Type, off int64, name string) {
		if len(out) >= maxLeaves {
			return
		}
		switch t := godwarf.ResolveTypedef(t).(type) {
		case *godwarf.StructType:
			if strings.HasPrefix(t.StructName, "sync.") && !strings.HasPrefix(t.StructName, "sync.atomic") {
				return
			}
			for _, f := range t.Field {
				if f.Type != nil && f.Type.Size() > 0 {
					walk(f.Type, off+f.ByteOffset, name+"."+f.Name)
				}
			}
			return
		case *godwarf.ArrayType:
			size := t.Type.Size()
			for i := int64(0); i < t.Count && size > 0; i++ {
				walk(t.Type, off+i*size, fmt.Sprintf("%s[%d]", name, i))
			}
			return
		}
		out = append(out, leaf{off: off, name: name})
	}
	walk(t, 0, "")
	if len(out) > 0 && out[0].off == 0 {
		out = out[1:] // the access at the value's address is recorded already
	}
	return out
}

// leafAccesses records, after e, the access of a struct or array value
// v, the accesses of its further leaves.
func (r *recorder) leafAccesses(e trace.Event, v *proc.Variable, expr string, emit func(trace.Event)) {
	if v.RealType == nil {
		return
	}
	for _, lf := range leaves(v.RealType) {
		obj := trace.ObjID(v.Addr + uint64(lf.off))
		if o, ok := r.t.Objects[obj]; !ok {
			r.t.Objects[obj] = trace.Object{Kind: trace.ObjVar, Name: expr + lf.name}
		} else if o.Kind != trace.ObjVar {
			continue
		}
		emit(trace.Event{Kind: e.Kind, Obj: obj, Site: e.Site, Flags: e.Flags & trace.AddrVaries})
	}
}
