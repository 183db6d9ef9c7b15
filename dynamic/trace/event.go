package trace

import (
	"fmt"
	"math"

	"github.com/avcheck/avcheck/internal/intent"
)

// GoID identifies a goroutine. It is the runtime's goroutine id where the
// recorder knows it, otherwise any number unique within the trace.
type GoID uint32

// OutsideG is the goroutine that stands for code a recorder does not
// see: it forks each goroutine that such code started (the standard
// library's net/http server, a time.AfterFunc), other than the testing
// package's tests. What orders those goroutines with the others is not
// recorded, so what a prediction reorders around them may be
// impossible (predict reports it at most as predicted).
const OutsideG GoID = 1<<31 - 2

// RootG is the goroutine that stands for the program itself: the
// recorders make it fork each goroutine whose go statement they do not
// record and that something recorded orders, such as a test's own
// goroutine, so that every goroutine is created before it runs. It only
// forks.
const RootG GoID = 1<<31 - 1

// ObjID identifies the object an event touches: a variable's address, a
// mutex, a channel, a WaitGroup, a Cond, a Once, or an atomic's address.
// For a Fork it is unused; the child goroutine is in Arg. The recorders
// give an object made at the address of one the garbage collector freed
// the address with a generation above it, addr | gen<<48 (gen < 1<<15),
// and objects of their own ids with bit 63 set.
type ObjID uint64

// Addr returns the address of an object identified by its address,
// without its generation; an id with bit 63 set, no address, as it is.
func (id ObjID) Addr() uint64 {
	if id>>63 != 0 {
		return uint64(id)
	}
	return uint64(id) & (1<<48 - 1)
}

// SiteID indexes Trace.Sites. Zero means "no site known".
type SiteID uint32

// RegionID identifies a static intended atomic region (an index into the
// probe plan's regions). Zero means "outside every region".
type RegionID uint32

// Kind is the operation of an event.
type Kind uint8

// The event kinds. Their text names (see Kind.String) are part of the
// text trace format and must not change.
const (
	KindInvalid       Kind = iota
	KindRead               // plain read of Obj; Value holds the value read, if recorded
	KindWrite              // plain write of Obj; Value holds the value written, if recorded
	KindAcquire            // Lock of mutex Obj, recorded after it succeeds
	KindRelease            // Unlock of mutex Obj, recorded before it happens
	KindRAcquire           // RLock of RWMutex Obj
	KindRRelease           // RUnlock of RWMutex Obj
	KindFork               // go statement; Arg is the child's GoID
	KindEnd                // the goroutine returned
	KindSend               // send on channel Obj; Arg is the message's 1-based sequence number on Obj
	KindRecv               // receive from channel Obj; Arg is the sequence number of the message received, 0 if it returned because Obj was closed
	KindClose              // close of channel Obj
	KindWGAdd              // WaitGroup.Add on Obj; Arg is the delta as a two's-complement int64
	KindWGDone             // WaitGroup.Done on Obj
	KindWGWait             // WaitGroup.Wait on Obj returned
	KindCondWait           // Cond.Wait on Obj returned (woken)
	KindCondSignal         // Cond.Signal on Obj
	KindCondBroadcast      // Cond.Broadcast on Obj
	KindOnceDo             // Once.Do on Obj returned; Arg is 1 if this call ran the function
	KindAtomicLoad         // sync/atomic load of Obj
	KindAtomicStore        // sync/atomic store of Obj
	KindAtomicRMW          // sync/atomic add, swap, CompareAndSwap, And or Or on Obj
	KindRegionBegin        // entering Region; Inst is its dynamic instance; Arg holds why it is meant to be atomic (Event.Intent)
	KindRegionEnd          // leaving Region instance Inst
	numKinds
)

var kindNames = [numKinds]string{
	KindInvalid:       "invalid",
	KindRead:          "rd",
	KindWrite:         "wr",
	KindAcquire:       "acq",
	KindRelease:       "rel",
	KindRAcquire:      "racq",
	KindRRelease:      "rrel",
	KindFork:          "fork",
	KindEnd:           "end",
	KindSend:          "send",
	KindRecv:          "recv",
	KindClose:         "close",
	KindWGAdd:         "wgadd",
	KindWGDone:        "wgdone",
	KindWGWait:        "wgwait",
	KindCondWait:      "cwait",
	KindCondSignal:    "csignal",
	KindCondBroadcast: "cbroadcast",
	KindOnceDo:        "once",
	KindAtomicLoad:    "aload",
	KindAtomicStore:   "astore",
	KindAtomicRMW:     "armw",
	KindRegionBegin:   "begin",
	KindRegionEnd:     "finish",
}

// String returns the kind's name in the text format.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind returns the kind with the given text-format name.
func ParseKind(s string) (Kind, bool) {
	for k := KindRead; k < numKinds; k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return KindInvalid, false
}

// IsAccess reports whether k reads or writes memory (plainly or atomically).
func (k Kind) IsAccess() bool {
	switch k {
	case KindRead, KindWrite, KindAtomicLoad, KindAtomicStore, KindAtomicRMW:
		return true
	}
	return false
}

// IsWrite reports whether k modifies memory.
func (k Kind) IsWrite() bool {
	return k == KindWrite || k == KindAtomicStore || k == KindAtomicRMW
}

// Event is one operation of one goroutine. It is a small value; traces of
// millions of events are streamed, not held, wherever an engine allows.
type Event struct {
	Seq      uint64   // position in the trace, from 0
	G        GoID     // the goroutine that performed it
	Kind     Kind     // what it did
	Obj      ObjID    // what it touched (see ObjID)
	Arg      uint64   // kind-specific argument (see the Kind constants)
	Value    uint64   // value read or written, when Flags has HasValue
	Site     SiteID   // where in the source
	Region   RegionID // the static region it belongs to, 0 if none
	Inst     uint64   // the dynamic instance of Region
	Branches uint32   // conditional branches taken since G's previous event (AVFilter's br)
	Flags    Flags
}

// Flags qualify an event.
type Flags uint8

const (
	// HasValue says Event.Value was recorded.
	HasValue Flags = 1 << iota
	// HasRange, on a read with a value, says what else the read may see
	// without changing its goroutine's course: every value of e.Range()
	// takes each conditional branch that depends on the read the way the
	// recorded value did, and the value is used for nothing else but the
	// value or address of the goroutine's later writes. The recorder sets
	// it only where it has checked every use of the value read (the
	// guards g(t) of Fusion, shared/seeds/001_af4533d3de4635d8.txt,
	// section 4.2, as intervals); the range is an under-approximation:
	// values outside it may or may not keep the branches. Arg holds it
	// (see Event.Range).
	HasRange
	// ValueIsLen, on a read with a value, says Value is the length of
	// what was read (a slice, string or map), not the value itself: two
	// reads of equal Value need not have read equal values.
	ValueIsLen
	// AddrVaries, on a write, says its address depends on values read
	// before it (an array element at an index read from memory): if
	// those reads see other values, it writes elsewhere.
	AddrVaries
	// Outside, on a read or write, says the access is a synchronisation
	// operation's own: the access of its variable that an atomic
	// operation makes, recorded next to its event. It belongs to no
	// region, even between a region's begin and end: it is never one of
	// a region's two accesses, since the operation's event stands for
	// it there, only the access another goroutine interleaves, and it
	// counts for races.
	Outside
	// ValueIsAddr, on a read with a value, says Value is an address: the
	// read loaded a pointer, and Arg is the size in bytes of what it
	// points to (0 if not known). A later access of the goroutine inside
	// [Value, Value+Arg) is taken to go through it, so that the read's
	// value decides which variable that access touches.
	ValueIsAddr
	// ValueConst, on a write with a value, says the value is a constant
	// of the program (true, nil, 0, a named constant), not computed from
	// anything its goroutine read: the write stores it in every
	// interleaving in which it happens, whatever its goroutine's earlier
	// reads saw.
	ValueConst
	// Rechecks, on a read, says the read checks its variable again in
	// a critical section, and its value decides a write of it there
	// (double-checked locking's second check): what its goroutine does
	// from there rests on this read, not on an earlier one, so that a
	// write between the two breaks nothing (predict keeps such an R-W-R
	// at predicted).
	Rechecks
)

// Range is a closed interval of values read as signed integers, with
// math.MinInt64 and math.MaxInt64 for "unbounded".
type Range struct{ Lo, Hi int64 }

// Contains reports whether v is in r.
func (r Range) Contains(v int64) bool { return r.Lo <= v && v <= r.Hi }

// rangeUnbounded is the distance in a packed Range that means "no bound
// on this side"; the largest finite distance is one less.
const rangeUnbounded = 1<<32 - 1

// Range returns the range of a read with HasRange, which Arg packs
// relative to Value (as int64): the distance down to Lo in its high 32
// bits and up to Hi in its low 32 bits, rangeUnbounded for no bound.
func (e Event) Range() (Range, bool) {
	if e.Flags&(HasRange|HasValue) != HasRange|HasValue {
		return Range{}, false
	}
	v := int64(e.Value)
	r := Range{Lo: math.MinInt64, Hi: math.MaxInt64}
	if down := int64(e.Arg >> 32); down != rangeUnbounded && v >= math.MinInt64+down {
		r.Lo = v - down
	}
	if up := int64(e.Arg & rangeUnbounded); up != rangeUnbounded && v <= math.MaxInt64-up {
		r.Hi = v + up
	}
	return r, true
}

// SetRange records r as the range of a read with a value, which r must
// contain (SetRange reports false and changes nothing otherwise). A bound
// farther from Value than a packed distance holds is moved closer, which
// keeps the range true: it is an under-approximation already.
func (e *Event) SetRange(r Range) bool {
	v := int64(e.Value)
	if e.Flags&HasValue == 0 || !r.Contains(v) {
		return false
	}
	pack := func(bounded bool, d uint64) uint64 {
		switch {
		case !bounded:
			return rangeUnbounded
		case d >= rangeUnbounded:
			return rangeUnbounded - 1
		}
		return d
	}
	down := pack(r.Lo != math.MinInt64, uint64(v)-uint64(r.Lo))
	up := pack(r.Hi != math.MaxInt64, uint64(r.Hi)-uint64(v))
	e.Arg = down<<32 | up
	e.Flags |= HasRange
	return true
}

// Intent returns why the region a KindRegionBegin event enters is meant
// to be atomic, and the sites of the two accesses the evidence links (0
// where it links none), which Arg packs: the evidence in its low 8 bits,
// the first site in the next 24, the second in the 24 above them. An Arg
// of 0 is intent.Unstated: a trace that does not say, whose regions are
// taken as intended.
func (e Event) Intent() (ev intent.Evidence, from, to SiteID) {
	if e.Kind != KindRegionBegin {
		return intent.Unstated, 0, 0
	}
	return intent.Evidence(e.Arg & 0xff), SiteID(e.Arg >> 8 & siteMask), SiteID(e.Arg >> 32 & siteMask)
}

// SetIntent records the intent of a KindRegionBegin event (see Intent).
func (e *Event) SetIntent(ev intent.Evidence, from, to SiteID) {
	e.Arg = uint64(ev) | uint64(from&siteMask)<<8 | uint64(to&siteMask)<<32
}

// siteMask is the part of a SiteID that an intent's Arg keeps: every
// site id a trace can declare (at most 2^20-1) fits.
const siteMask = 1<<24 - 1

// Site is a source position of an event.
type Site struct {
	File string
	Line int
	Col  int
	Func string // the function, as "pkg.Func" or "(*pkg.T).M"; may be empty
}

// String returns "file:line:col".
func (s Site) String() string {
	return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)
}

// ObjKind says what kind of object an ObjID names.
type ObjKind uint8

// The object kinds.
const (
	ObjUnknown ObjKind = iota
	ObjVar
	ObjMutex
	ObjRWMutex
	ObjChan
	ObjWaitGroup
	ObjCond
	ObjOnce
)

// Object describes an ObjID: what it is and how people name it.
type Object struct {
	Kind ObjKind
	Name string // the expression that reached it, such as "c.n" or "mu"
	Cap  int    // channel capacity, for ObjChan
}

// Trace is a whole trace in memory, for the engines that need random
// access to its events. Streaming engines take a Reader instead.
type Trace struct {
	Events  []Event
	Sites   []Site // indexed by SiteID; Sites[0] is the zero Site
	Objects map[ObjID]Object
}

// Site returns the site with the given id, or the zero Site.
func (t *Trace) Site(id SiteID) Site {
	if int(id) < len(t.Sites) {
		return t.Sites[id]
	}
	return Site{}
}

// Object returns what is known of the object, or the zero Object.
func (t *Trace) Object(id ObjID) Object { return t.Objects[id] }

// Reader streams a trace one event at a time, so that engines whose memory
// depends only on goroutines, locks and variables can run over traces of
// any length.
type Reader interface {
	// Next returns the next event, or io.EOF after the last one. Any other
	// error names the file position that is malformed.
	Next() (Event, error)
	// Site and Object describe the ids of the events returned so far: a
	// trace declares each site and object before its first use.
	Site(SiteID) Site
	Object(ObjID) Object
}
