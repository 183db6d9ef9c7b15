package trace

import (
	"errors"
	"sync"
)

// Sizing ReadAll's array from the file: the estimate is made once
// sizeSample bytes have been read, with a margin for the events read ahead
// and for lines of varying length; it is not trusted beyond maxEstimate
// events.
const (
	sizeSample  = 4 << 20
	sizeMargin  = 1.03
	maxEstimate = 1 << 31
)

// aheadBatch is the number of events ReadAhead hands over at a time: large
// enough that the hand-over costs little per event, small enough that the
// batches in flight take a few hundred kilobytes whatever the trace's
// length.
const aheadBatch = 4096

// aheadInFlight is the number of batches the reading goroutine may be
// ahead of the caller.
const aheadInFlight = 4

// aheadBatches is the number of batches a ReadAhead allocates: those in
// flight, the one the caller reads and the one being filled.
const aheadBatches = aheadInFlight + 2

// sentCacheBits sizes the reading goroutine's table of objects already
// handed over: 256 entries.
const sentCacheBits = 8

// sentObj is an entry of that table: an object handed over, if ok.
type sentObj struct {
	id ObjID
	ok bool
}

// eventInto is implemented by the readers that can store the next event
// in place (Next's result, or its error).
type eventInto interface {
	nextInto(e *Event) error
}

// errAheadClosed is what Next returns after Close.
var errAheadClosed = errors.New("trace: read after Close")

// batch is a run of events with the declarations they use first.
type batch struct {
	events []Event
	sites  []siteDecl
	objs   []objDecl
	err    error // after the events: io.EOF, a format or a validation error
	read   int64 // the bytes of the file read when the batch was full, 0 if unknown
}

type siteDecl struct {
	id SiteID
	s  Site
}

type objDecl struct {
	id ObjID
	o  Object
}

// AheadReader is a Reader that parses, and optionally validates, a trace
// on a goroutine of its own, a few thousand events ahead of its caller, so
// that on a machine with two cores reading the file and an engine run at
// the same time. Its memory does not depend on the trace's length.
//
// Site and Object answer from copies of the declarations that come with
// the events, so the caller never touches the underlying reader's tables
// while the reading goroutine fills them.
type AheadReader struct {
	out   chan *batch
	free  chan *batch
	stop  chan struct{}
	done  sync.WaitGroup
	cur   *batch
	i     int
	err   error
	sites []Site
	objs  map[ObjID]Object
	// prog, when the underlying reader is a File, says how much of the
	// file has been read, so that appendAll can size its array once.
	prog func() (read, size int64)
}

// progressor is implemented by File.
type progressor interface {
	progress() (read, size int64)
}

// ReadAhead starts reading r on a new goroutine. When v is not nil every
// event goes through v.Step first, and the first error it gives is
// returned by Next in the event's place. Call Close when done, even after
// io.EOF. r must not be used by anyone else until Close returns.
func ReadAhead(r Reader, v *Validator) *AheadReader {
	a := &AheadReader{
		out:   make(chan *batch, aheadInFlight),
		free:  make(chan *batch, aheadBatches),
		stop:  make(chan struct{}),
		sites: []Site{{}},
		objs:  make(map[ObjID]Object),
	}
	if p, ok := r.(progressor); ok {
		a.prog = p.progress
	}
	a.done.Add(1)
	go a.read(r, v)
	return a
}

// read is the reading goroutine: it fills batches until the trace ends,
// an error, or Close.
func (a *AheadReader) read(r Reader, v *Validator) {
	defer a.done.Done()
	defer close(a.out)
	// Declarations are handed over the first time an event uses them; a
	// reader declares each before its first use.
	var siteSent []bool
	objSent := make(map[ObjID]bool)
	var sentCache [1 << sentCacheBits]sentObj
	var lastObj ObjID
	haveLast := false
	made := 0
	// A reader that can parse into the batch's array does, rather than
	// return each event to be copied there.
	var into eventInto
	if f, ok := r.(*File); ok {
		into, _ = f.Reader.(eventInto)
	} else {
		into, _ = r.(eventInto)
	}
	for {
		var b *batch
		select {
		case b = <-a.free:
		default:
			if made < aheadBatches {
				made++
				b = &batch{events: make([]Event, 0, aheadBatch)}
				break
			}
			// Every batch is in flight: wait for the caller to hand one
			// back, so that a slow caller costs no allocation.
			select {
			case b = <-a.free:
			case <-a.stop:
				return
			}
		}
		b.events, b.sites, b.objs, b.err = b.events[:0], b.sites[:0], b.objs[:0], nil
		for len(b.events) < aheadBatch {
			n := len(b.events)
			b.events = b.events[:n+1]
			e := &b.events[n]
			var err error
			if into != nil {
				err = into.nextInto(e)
			} else {
				*e, err = r.Next()
			}
			if err == nil && v != nil {
				err = v.Step(*e)
			}
			if err != nil {
				b.events = b.events[:n]
				b.err = err
				break
			}
			if e.Site != 0 && (int(e.Site) >= len(siteSent) || !siteSent[e.Site]) {
				b.sites = declareSite(&siteSent, b.sites, r, e.Site)
			}
			if e.Kind == KindRegionBegin {
				// The positions of a region's intent are sites too.
				_, from, to := e.Intent()
				b.sites = declareSite(&siteSent, b.sites, r, from)
				b.sites = declareSite(&siteSent, b.sites, r, to)
			}
			if usesObj(e.Kind) && (!haveLast || e.Obj != lastObj) {
				// A small direct-mapped table of objects already handed
				// over answers before the map: a trace uses few objects,
				// over and over.
				c := &sentCache[uint64(e.Obj)*0x9E3779B97F4A7C15>>(64-sentCacheBits)]
				if !c.ok || c.id != e.Obj {
					if !objSent[e.Obj] {
						objSent[e.Obj] = true
						b.objs = append(b.objs, objDecl{e.Obj, r.Object(e.Obj)})
					}
					*c = sentObj{e.Obj, true}
				}
				lastObj, haveLast = e.Obj, true
			}
		}
		if a.prog != nil {
			b.read, _ = a.prog()
		}
		select {
		case a.out <- b:
		case <-a.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// declareSite appends site id's declaration to decls unless sent says it
// was handed over already (or id is 0), and marks it sent.
func declareSite(sent *[]bool, decls []siteDecl, r Reader, id SiteID) []siteDecl {
	if id == 0 {
		return decls
	}
	for int(id) >= len(*sent) {
		*sent = append(*sent, false)
	}
	if (*sent)[id] {
		return decls
	}
	(*sent)[id] = true
	return append(decls, siteDecl{id, r.Site(id)})
}

// fill makes the next batch current and records its declarations; it
// reports false, with a.err set, when there is none.
func (a *AheadReader) fill() bool {
	if a.err != nil {
		return false
	}
	if a.cur != nil {
		if a.cur.err != nil {
			a.err = a.cur.err
			return false
		}
		select {
		case a.free <- a.cur:
		default:
		}
		a.cur = nil
	}
	b, ok := <-a.out
	if !ok {
		a.err = errAheadClosed
		return false
	}
	for _, d := range b.sites {
		for int(d.id) >= len(a.sites) {
			a.sites = append(a.sites, Site{})
		}
		a.sites[d.id] = d.s
	}
	for _, d := range b.objs {
		if d.o != (Object{}) {
			a.objs[d.id] = d.o
		}
	}
	a.cur, a.i = b, 0
	return true
}

// appendAll appends the rest of the events to evs a batch at a time, for
// ReadAll. Reading a file, once a sample of it has been read, it grows evs
// to the number of events the file's size predicts, so that a long trace
// is not copied at every growth of its array, nor held twice while it is.
func (a *AheadReader) appendAll(evs []Event, each func([]Event)) ([]Event, error) {
	sized := false
	for {
		if a.cur != nil {
			more := len(a.cur.events) - a.i
			if !sized && a.prog != nil && len(evs)+more > cap(evs) {
				if _, size := a.prog(); size > 0 && a.cur.read >= sizeSample {
					sized = true
					// The events up to the end of this batch came from at
					// most cur.read bytes, less what the file's buffer
					// holds ahead: the estimate is low by that, and the
					// margin covers it.
					n := len(evs) + more
					want := int64(float64(n) * float64(size) / float64(a.cur.read) * sizeMargin)
					if want > int64(cap(evs)) && want < maxEstimate {
						// Not slices.Grow, which rounds up geometrically.
						grown := make([]Event, len(evs), want)
						copy(grown, evs)
						evs = grown
					}
				}
			}
			from := len(evs)
			evs = append(evs, a.cur.events[a.i:]...)
			a.i = len(a.cur.events)
			if each != nil && len(evs) > from {
				each(evs[from:])
			}
		}
		if !a.fill() {
			return evs, a.err
		}
	}
}

// Next returns the next event, or the error the reading goroutine met in
// its place: io.EOF after the last event, a *FormatError, or a
// *ValidationError.
func (a *AheadReader) Next() (Event, error) {
	for a.cur == nil || a.i >= len(a.cur.events) {
		if !a.fill() {
			return Event{}, a.err
		}
	}
	a.i++
	return a.cur.events[a.i-1], nil
}

// Site returns the site of an id the events returned so far use.
func (a *AheadReader) Site(id SiteID) Site {
	if int(id) < len(a.sites) {
		return a.sites[id]
	}
	return Site{}
}

// Object returns what is known of an object the events returned so far
// use.
func (a *AheadReader) Object(id ObjID) Object { return a.objs[id] }

// declaredSites and declaredObjects give ReadAll the declarations the
// events use, so that it need not collect them event by event.
func (a *AheadReader) declaredSites() []Site             { return a.sites }
func (a *AheadReader) declaredObjects() map[ObjID]Object { return a.objs }

// Close stops the reading goroutine and waits for it.
func (a *AheadReader) Close() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	// Drain, so that the reading goroutine, blocked on a full channel or
	// not, sees stop.
	for range a.out {
	}
	a.done.Wait()
	a.cur = nil
	if a.err == nil {
		a.err = errAheadClosed
	}
}
