package trace

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Names describes the sites and objects of a trace; Reader and *Trace
// implement it. Messages use it to name objects as people wrote them.
type Names interface {
	Site(SiteID) Site
	Object(ObjID) Object
}

// ValidationError says which event makes a trace impossible as a
// sequentially consistent run, and why.
type ValidationError struct {
	Event Event
	Msg   string // such as "release of mu, which g2 does not hold"
	text  string // the event as people read it
}

// Error returns "event SEQ (EVENT): MSG".
func (e *ValidationError) Error() string {
	text := e.text
	if text == "" {
		text = e.Event.String()
	}
	return fmt.Sprintf("event %d (%s): %s", e.Event.Seq, text, e.Msg)
}

// Validator checks, one event at a time, that a trace is a possible
// sequentially consistent execution of a Go program:
//
//   - program order: Seq increases; the first event's goroutine is the
//     main one, every other goroutine appears only after its fork, and
//     none after its end;
//   - locks: Lock only when no one holds the mutex (Go mutexes are not
//     reentrant, so that includes the acquirer); RLock only when no
//     writer holds it, and read-locks are shared; Unlock and RUnlock only
//     of a held lock, by its holder or by another goroutine (see below).
//     Releases need not be in reverse order of acquisition;
//   - channels: sends on a channel number their messages 1, 2, 3...;
//     a receive of message k comes after send k and is the only receive
//     of it; a receive of 0 (closed) comes after the close; no send after
//     close, no second close;
//   - WaitGroups: the counter never goes negative and is zero when a
//     Wait returns;
//   - Once: at most one Do runs the function, and no Do returns before it;
//   - Cond: a Wait returns only after some Signal or Broadcast;
//   - regions: begin and finish are properly nested per goroutine.
//
// Go lets one goroutine unlock a mutex another locked ("A locked Mutex
// is not associated with a particular goroutine"): a lock handed over, a
// publisher that locks a handler's mutex and the goroutine that runs the
// handler unlocking it. Such a release is valid and releases the lock
// from its holder; the predictors end the holder's critical section
// there (Locks.release, the precise stage's sections).
type Validator struct {
	// HolderUnlocks rejects an Unlock or RUnlock by a goroutine other
	// than the holder.
	HolderUnlocks bool
	// IgnoreSeq skips the check that Seq increases, for schedules made by
	// reordering a trace's events (a witness), which keep their Seq.
	IgnoreSeq bool
	// CheckCapacity also checks that a send finds room: at most cap
	// messages buffered plus the one being handed over, for channels whose
	// Object declares a capacity (0 for unbuffered). It is off by default
	// because a recorder may see senders that are still blocked; it is
	// meant for schedules that predictors build.
	CheckCapacity bool

	names   Names
	started bool
	lastSeq uint64
	err     error
	gs      map[GoID]*goState
	locks   map[ObjID]*lockState
	chans   map[ObjID]*chanState
	wgs     map[ObjID]int64
	onces   map[ObjID]bool
	conds   map[ObjID]bool
}

type goState struct {
	ended   bool
	regions []regionInst
}

type regionInst struct {
	region RegionID
	inst   uint64
}

type lockState struct {
	writer  GoID
	locked  bool
	readers map[GoID]int
	nread   int
}

type chanState struct {
	sent     uint64
	received map[uint64]bool
	closed   bool
}

// NewValidator returns a validator that names objects in its messages by
// names, which may be nil.
func NewValidator(names Names) *Validator {
	return &Validator{
		names: names,
		gs:    make(map[GoID]*goState),
		locks: make(map[ObjID]*lockState),
		chans: make(map[ObjID]*chanState),
		wgs:   make(map[ObjID]int64),
		onces: make(map[ObjID]bool),
		conds: make(map[ObjID]bool),
	}
}

// Validate checks a whole trace; see Validator.
func Validate(t *Trace) error {
	v := NewValidator(t)
	for _, e := range t.Events {
		if err := v.Step(e); err != nil {
			return err
		}
	}
	return nil
}

// ValidateReader checks the rest of a streamed trace, returning the
// number of events read. A malformed file gives its *FormatError.
func ValidateReader(r Reader) (int64, error) {
	v := NewValidator(r)
	var n int64
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
		if err := v.Step(e); err != nil {
			return n, err
		}
	}
}

func (v *Validator) fail(e Event, format string, args ...any) error {
	var names interface{ Object(ObjID) Object }
	if v.names != nil {
		names = v.names
	}
	text := string(AppendEvent(nil, e, names))
	v.err = &ValidationError{Event: e, Msg: fmt.Sprintf(format, args...), text: text}
	return v.err
}

// obj names an object for a message.
func (v *Validator) obj(id ObjID) string {
	if v.names != nil {
		if n := v.names.Object(id).Name; n != "" {
			return n
		}
	}
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

func gname(g GoID) string { return "g" + strconv.FormatUint(uint64(g), 10) }

// Step checks the next event. After the first error it returns that
// error again.
func (v *Validator) Step(e Event) error {
	if v.err != nil {
		return v.err
	}
	if e.Kind == KindInvalid || e.Kind >= numKinds {
		return v.fail(e, "invalid event kind %d", e.Kind)
	}
	if e.Flags&(HasRange|ValueIsLen) != 0 && (e.Kind != KindRead || e.Flags&HasValue == 0) {
		return v.fail(e, "a range or a length needs a read with a value, not %s", e.Kind)
	}
	if e.Flags&ValueIsAddr != 0 && (e.Kind != KindRead || e.Flags&(HasValue|HasRange|ValueIsLen) != HasValue) {
		return v.fail(e, "an address needs a read with a value and no range or length, not %s", e.Kind)
	}
	if e.Flags&ValueConst != 0 && (e.Kind != KindWrite || e.Flags&HasValue == 0) {
		return v.fail(e, "a constant value needs a write with a value, not %s", e.Kind)
	}
	if e.Flags&Outside != 0 && (!e.Kind.IsAccess() || e.Region != 0) {
		return v.fail(e, "an access outside every region must be a read or write with no region, not %s", e.Kind)
	}
	if v.started && e.Seq <= v.lastSeq && !v.IgnoreSeq {
		return v.fail(e, "sequence number %d does not follow %d", e.Seq, v.lastSeq)
	}
	if e.Flags&Rechecks != 0 && e.Kind != KindRead {
		return v.fail(e, "a re-check needs a read, not %s", e.Kind)
	}
	if e.G == OutsideG && e.Kind != KindFork {
		return v.fail(e, "%s stands for code that is not recorded and only forks, not %s", gname(e.G), e.Kind)
	}
	g := v.gs[e.G]
	if g == nil {
		if v.started && e.G != OutsideG {
			return v.fail(e, "%s runs before any fork created it", gname(e.G))
		}
		g = &goState{}
		v.gs[e.G] = g
	}
	if g.ended {
		return v.fail(e, "%s runs after its end", gname(e.G))
	}
	v.started = true
	v.lastSeq = e.Seq

	switch e.Kind {
	case KindFork:
		if e.Arg > 1<<32-1 {
			return v.fail(e, "fork of goroutine %d, which is not a goroutine id", e.Arg)
		}
		c := GoID(e.Arg)
		if c == e.G {
			return v.fail(e, "%s forks itself", gname(c))
		}
		if v.gs[c] != nil {
			return v.fail(e, "fork of %s, which already exists", gname(c))
		}
		v.gs[c] = &goState{}
	case KindEnd:
		g.ended = true
	case KindAcquire:
		l := v.lock(e.Obj)
		if l.locked {
			if l.writer == e.G {
				return v.fail(e, "acquire of %s, which %s already holds", v.obj(e.Obj), gname(e.G))
			}
			return v.fail(e, "acquire of %s, which %s holds", v.obj(e.Obj), gname(l.writer))
		}
		if l.nread > 0 {
			return v.fail(e, "acquire of %s, which is read-locked", v.obj(e.Obj))
		}
		l.locked, l.writer = true, e.G
	case KindRelease:
		l := v.lock(e.Obj)
		if !l.locked {
			return v.fail(e, "release of %s, which is not locked", v.obj(e.Obj))
		}
		if l.writer != e.G && v.HolderUnlocks {
			return v.fail(e, "release of %s, which %s does not hold", v.obj(e.Obj), gname(e.G))
		}
		l.locked = false
	case KindRAcquire:
		l := v.lock(e.Obj)
		if l.locked {
			return v.fail(e, "read-acquire of %s, which %s holds", v.obj(e.Obj), gname(l.writer))
		}
		if l.readers == nil {
			l.readers = make(map[GoID]int)
		}
		l.readers[e.G]++
		l.nread++
	case KindRRelease:
		l := v.lock(e.Obj)
		holder := e.G
		if l.readers[holder] == 0 {
			if v.HolderUnlocks || l.nread == 0 {
				return v.fail(e, "read-release of %s, which %s does not read-hold", v.obj(e.Obj), gname(e.G))
			}
			for r := range l.readers {
				holder = r // any reader: which one is not recorded
				break
			}
		}
		if l.readers[holder]--; l.readers[holder] == 0 {
			delete(l.readers, holder)
		}
		l.nread--
	case KindSend:
		c := v.chanOf(e.Obj)
		if c.closed {
			return v.fail(e, "send on %s after it was closed", v.obj(e.Obj))
		}
		if e.Arg != c.sent+1 {
			return v.fail(e, "send of message %d on %s, expected message %d", e.Arg, v.obj(e.Obj), c.sent+1)
		}
		if v.CheckCapacity && v.names != nil {
			if o := v.names.Object(e.Obj); o.Kind == ObjChan {
				if pending := c.sent - uint64(len(c.received)); pending > uint64(o.Cap) {
					return v.fail(e, "send on %s while %d messages wait, more than its capacity %d allows", v.obj(e.Obj), pending, o.Cap)
				}
			}
		}
		c.sent++
	case KindRecv:
		c := v.chanOf(e.Obj)
		if e.Arg == 0 {
			if !c.closed {
				return v.fail(e, "receive from %s returned closed, but %s is not closed", v.obj(e.Obj), v.obj(e.Obj))
			}
			break
		}
		if e.Arg > c.sent {
			return v.fail(e, "receive of message %d on %s before it was sent", e.Arg, v.obj(e.Obj))
		}
		if c.received[e.Arg] {
			return v.fail(e, "message %d on %s received twice", e.Arg, v.obj(e.Obj))
		}
		if c.received == nil {
			c.received = make(map[uint64]bool)
		}
		c.received[e.Arg] = true
	case KindClose:
		c := v.chanOf(e.Obj)
		if c.closed {
			return v.fail(e, "close of %s, which is already closed", v.obj(e.Obj))
		}
		c.closed = true
	case KindWGAdd, KindWGDone:
		d := int64(e.Arg)
		if e.Kind == KindWGDone {
			d = -1
		}
		n := v.wgs[e.Obj] + d
		if n < 0 {
			return v.fail(e, "counter of %s goes negative (%d)", v.obj(e.Obj), n)
		}
		v.wgs[e.Obj] = n
	case KindWGWait:
		if n := v.wgs[e.Obj]; n != 0 {
			return v.fail(e, "wait on %s returned while its counter is %d", v.obj(e.Obj), n)
		}
	case KindOnceDo:
		ran := v.onces[e.Obj]
		switch {
		case e.Arg > 1:
			return v.fail(e, "once argument %d is not 0 or 1", e.Arg)
		case e.Arg == 1 && ran:
			return v.fail(e, "%s runs its function a second time", v.obj(e.Obj))
		case e.Arg == 0 && !ran:
			return v.fail(e, "Do of %s returns before any call ran its function", v.obj(e.Obj))
		}
		v.onces[e.Obj] = true
	case KindCondSignal, KindCondBroadcast:
		v.conds[e.Obj] = true
	case KindCondWait:
		if !v.conds[e.Obj] {
			return v.fail(e, "wait on %s returned before any signal or broadcast", v.obj(e.Obj))
		}
	case KindRegionBegin:
		if e.Region == 0 {
			return v.fail(e, "region begin without a region id")
		}
		if ev, _, _ := e.Intent(); !ev.Valid() {
			return v.fail(e, "region begin with intent %d, which is not a kind of evidence avcheck knows", uint8(ev))
		}
		g.regions = append(g.regions, regionInst{e.Region, e.Inst})
	case KindRegionEnd:
		r := regionInst{e.Region, e.Inst}
		if len(g.regions) == 0 {
			return v.fail(e, "end of region %s, which %s has not begun", r, gname(e.G))
		}
		if top := g.regions[len(g.regions)-1]; top != r {
			return v.fail(e, "end of region %s, but the innermost open region of %s is %s", r, gname(e.G), top)
		}
		g.regions = g.regions[:len(g.regions)-1]
	}
	return nil
}

func (r regionInst) String() string {
	return strconv.FormatUint(uint64(r.region), 10) + "." + strconv.FormatUint(r.inst, 10)
}

func (v *Validator) lock(id ObjID) *lockState {
	l := v.locks[id]
	if l == nil {
		l = &lockState{}
		v.locks[id] = l
	}
	return l
}

func (v *Validator) chanOf(id ObjID) *chanState {
	c := v.chans[id]
	if c == nil {
		c = &chanState{}
		v.chans[id] = c
	}
	return c
}
