package record

import (
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/avcheck/avcheck/dynamic/record/avrt"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// Converting the runtime's raw events (package avrt) into a trace.
//
// The raw file is a header and chunks of fixed-size events, each chunk
// in the order of the events' sequence numbers; a merge of the chunks by
// sequence number is the order the program ran them in. The converter
// then does what the Delve recorder does as it stops: it gives each
// goroutine whose parent is not known a fork from the root goroutine,
// numbers regions' instances and channels' messages, names objects, and
// steps every event through trace.Validator. An event that the program
// did but whose partners the trace lacks (the release of a lock taken
// outside the packages under test, a receive of a message sent by code
// that is not rewritten, the Done of an Add that is not recorded) is left
// out, so that the trace stays a possible execution; if one still makes
// the trace impossible, the trace ends before it, as the Delve
// recorder's does.

// rawCursor reads one chunk of the raw file.
type rawCursor struct {
	r    io.ReaderAt
	off  int64 // the next event's offset
	end  int64
	buf  []byte
	pos  int
	head avrt.Event
}

const cursorEvents = 256

// next loads the cursor's next event into head, reporting false at the
// chunk's end.
func (c *rawCursor) next() bool {
	if c.pos >= len(c.buf) {
		if c.off >= c.end {
			return false
		}
		n := min(int64(cursorEvents*avrt.EventSize), c.end-c.off)
		if cap(c.buf) < int(n) {
			c.buf = make([]byte, n)
		}
		c.buf = c.buf[:n]
		m, err := c.r.ReadAt(c.buf, c.off)
		c.buf = c.buf[:m-m%avrt.EventSize]
		if len(c.buf) == 0 || err != nil && !errors.Is(err, io.EOF) {
			return false
		}
		c.off += int64(len(c.buf))
		c.pos = 0
	}
	b := c.buf[c.pos:]
	c.pos += avrt.EventSize
	c.head = avrt.Event{
		Seq: binary.LittleEndian.Uint64(b), G: binary.LittleEndian.Uint64(b[8:]),
		Obj: binary.LittleEndian.Uint64(b[16:]), Arg: binary.LittleEndian.Uint64(b[24:]),
		Site: binary.LittleEndian.Uint32(b[32:]), Kind: avrt.Kind(b[36]),
	}
	return c.head.Seq != 0
}

type cursorHeap []*rawCursor

func (h cursorHeap) Len() int           { return len(h) }
func (h cursorHeap) Less(i, j int) bool { return h[i].head.Seq < h[j].head.Seq }
func (h cursorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)        { *h = append(*h, x.(*rawCursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// readRaw calls f with the events of the raw file in the order of their
// sequence numbers, until f returns false.
func readRaw(f *os.File, each func(avrt.Event) bool) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	head := make([]byte, len(avrt.Magic)+1)
	if _, err := f.ReadAt(head, 0); err != nil || string(head[:len(avrt.Magic)]) != avrt.Magic {
		return fmt.Errorf("%s: not a raw event file of the recording runtime (was the program built by avcheck?)", f.Name())
	}
	if int(head[len(avrt.Magic)]) != avrt.EventSize {
		return fmt.Errorf("%s: events of %d bytes, expected %d", f.Name(), head[len(avrt.Magic)], avrt.EventSize)
	}
	cut, _, err := rawCut(f)
	if err != nil {
		return err
	}
	var h cursorHeap
	for off := int64(avrt.HeaderBytes); off < fi.Size(); off += int64(avrt.ChunkBytes) {
		c := &rawCursor{r: f, off: off, end: min(off+int64(avrt.ChunkBytes), fi.Size())}
		if c.next() {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		if cut != 0 && c.head.Seq > cut || !each(c.head) {
			return nil
		}
		if c.next() {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// rawCut reads from the header of a raw file the sequence number of the
// last event recorded before the recording stopped early, and why
// (avrt.CutOffset); 0 and 0 if it did not.
func rawCut(f *os.File) (uint64, byte, error) {
	var b [9]byte
	if _, err := f.ReadAt(b[:], avrt.CutOffset); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return binary.NativeEndian.Uint64(b[:8]), b[8], nil
}

// convOutcome is what the conversion tells the outcome.
type convOutcome struct {
	Invalid string // why the trace ends before the run did
	Dropped int    // events left out for want of their partners
	Widened int    // times a channel's declared capacity grew (sendDone)
	Cut     byte   // why the runtime stopped recording early (avrt.CutLimit, CutDiskFull), 0 if it did not
	// Reached are the top-level tests that began (their functions'
	// full names), less those waiting in t.Parallel at the recording's
	// end, and ended says which of them ended.
	Reached map[string]bool
}

type convG struct {
	id      trace.GoID
	regions []convRegion
	ended   bool
	rholds  map[trace.ObjID]int
	br      uint32  // branches passed since the goroutine's previous access or lock operation
	params  []int64 // the parameters recorded for the goroutine's next read
	// waits is the goroutine's last event if it is a send: the goroutine
	// goes on only after the receive that send waits for.
	waits *sentMsg
	// inTest says the goroutine runs a test whose beginning testOrder
	// recorded, and whose end it is to record.
	inTest bool
	test   testState // the subtest it runs and those it started (testorder.go)
	// pastInit, on the main goroutine, says it recorded an event of a
	// function that runs once package initialisation is over (mainG,
	// endsInit).
	pastInit bool
	// runsTests says the goroutine is in TestMain's call of m.Run
	// (avrt.RunTests).
	runsTests bool
}

// sentMsg is a channel's message.
type sentMsg struct {
	ch  trace.ObjID
	msg uint64
}

type convRegion struct {
	id       int
	inst     uint64
	covers   []int // the plan's regions this instance stands for
	fn       string
	intended bool
}

type convChan struct {
	sent, received uint64
	closed         bool
	cap            uint64 // the capacity the trace declares
}

type converter struct {
	in       *Instrumented
	t        *trace.Trace
	v        *trace.Validator
	gs       map[uint64]*convG
	children map[uint64]uint64 // token → the goroutine that started with it
	started  map[uint64]bool   // goroutines that a recorded fork created
	rootUp   bool
	// testsFrom is the goroutine in TestMain's call of m.Run, until an
	// example runs on it: it forks the goroutines first seen (runTests).
	testsFrom *convG
	// runningTests counts the goroutines in a call of m.Run.
	runningTests int
	inst         map[int]uint64
	chans        map[trace.ObjID]*convChan
	holder       map[trace.ObjID]trace.GoID // a lock's writer
	readers      map[trace.ObjID]int
	wg           map[trace.ObjID]int64
	signaled     map[trace.ObjID]bool
	onceRan      map[trace.ObjID]bool
	onceIDs      map[uint64]trace.ObjID // a reused Once's address → its id
	onceGen      map[uint64]uint64
	derived      map[derivedObj]trace.ObjID
	out          convOutcome

	// The receives of each channel in the order of their probes, for
	// sendDone to step a receive early; the raw event being stepped; the
	// raw events stepped early.
	recvs  map[trace.ObjID][]laterRecv
	recvAt map[trace.ObjID]int
	// The sends of select cases, recorded after them, per channel in the
	// order of their probes, for a receive to step its send early
	// (hoistSent).
	sents   map[trace.ObjID][]laterRecv
	sentAt  map[trace.ObjID]int
	cur     uint64
	hoisted map[uint64]bool
}

// laterRecv is a receive's raw event and the sequence number of its
// goroutine's previous raw event (0 if none).
type laterRecv struct {
	ev   avrt.Event
	prev uint64
}

// derivedObj is an object the converter adds for another: a channel's
// own variable, an atomic variable's lock (shadow.go).
type derivedObj struct {
	of  trace.ObjID
	key string
}

// convert reads the raw file into a trace.
func (in *Instrumented) convert(name string) (*trace.Trace, convOutcome, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, convOutcome{}, err
	}
	defer f.Close()
	t := &trace.Trace{Objects: make(map[trace.ObjID]trace.Object)}
	for _, s := range in.sites {
		t.Sites = append(t.Sites, s.Site)
	}
	c := &converter{
		in: in, t: t, gs: make(map[uint64]*convG), children: make(map[uint64]uint64), started: make(map[uint64]bool),
		inst: make(map[int]uint64), chans: make(map[trace.ObjID]*convChan), holder: make(map[trace.ObjID]trace.GoID),
		readers: make(map[trace.ObjID]int), wg: make(map[trace.ObjID]int64), signaled: make(map[trace.ObjID]bool),
		onceRan: make(map[trace.ObjID]bool), onceIDs: make(map[uint64]trace.ObjID), onceGen: make(map[uint64]uint64), derived: make(map[derivedObj]trace.ObjID),
		recvs: make(map[trace.ObjID][]laterRecv), recvAt: make(map[trace.ObjID]int), hoisted: make(map[uint64]bool),
		sents: make(map[trace.ObjID][]laterRecv), sentAt: make(map[trace.ObjID]int),
	}
	c.v = trace.NewValidator(t)
	if _, c.out.Cut, err = rawCut(f); err != nil {
		return nil, convOutcome{}, err
	}
	// The children's tokens first: a fork names its child, whose id the
	// raw fork does not know. And the channels' receives.
	last := make(map[uint64]uint64)
	ids := newChanIDs()
	raw := 0
	tests := make(map[string]testProgress)
	if err := readRaw(f, func(e avrt.Event) bool {
		raw++
		e.Obj = ids.of(e)
		switch e.Kind {
		case avrt.KindTestBegin, avrt.KindTestGo, avrt.KindTestEnd, avrt.KindTestParallel, avrt.KindTestResume:
			if fn := in.siteFunc(e.Site); fn != "" {
				tests[fn] = tests[fn].step(e.Kind)
			}
		case avrt.KindStart:
			c.children[e.Arg] = e.G
		case avrt.KindRecv, avrt.KindRangeEnd:
			id := trace.ObjID(e.Obj)
			c.recvs[id] = append(c.recvs[id], laterRecv{in.local(e), last[e.G]})
		case avrt.KindSent:
			id := trace.ObjID(e.Obj)
			c.sents[id] = append(c.sents[id], laterRecv{in.local(e), last[e.G]})
		}
		last[e.G] = e.Seq
		return true
	}); err != nil {
		return nil, convOutcome{}, err
	}
	// A raw event makes about one event of the trace (a branch or a
	// parameter makes none, a goroutine's start adds its fork): the
	// array made once spares copying a growing one, which was a third
	// of the conversion's time. An atomic operation makes four (the
	// operation, and its plain access under the recorder's own lock), so
	// a trace of many still grows the array.
	c.out.Reached = make(map[string]bool)
	for fn, p := range tests {
		if p.began && !p.waiting {
			c.out.Reached[fn] = true
		}
	}
	t.Events = make([]trace.Event, 0, raw+raw/64)
	ids = newChanIDs()
	vars := newVarIDs()
	if err := readRaw(f, func(e avrt.Event) bool {
		e = in.local(e)
		e.Obj = ids.of(e)
		e = vars.mapped(e)
		e.Obj = vars.of(e)
		if c.hoisted[e.Seq] {
			delete(c.hoisted, e.Seq)
			return true
		}
		c.cur = e.Seq
		c.step(e)
		return c.out.Invalid == ""
	}); err != nil {
		return nil, convOutcome{}, err
	}
	c.finish()
	return t, c.out, nil
}

// testProgress is how far a top-level test got in the recording: it
// began (avrt.TestBegin, TestGo), and it waits in t.Parallel (between
// avrt.TestParallel and TestResume of its own function).
type testProgress struct{ began, waiting bool }

func (p testProgress) step(k avrt.Kind) testProgress {
	switch k {
	case avrt.KindTestBegin, avrt.KindTestGo:
		p.began = true
	case avrt.KindTestParallel:
		p.waiting = true
	case avrt.KindTestResume, avrt.KindTestEnd:
		p.waiting = false
	}
	return p
}

// siteFunc returns the function of the site a raw event's probe passed,
// "" for none.
func (in *Instrumented) siteFunc(raw uint32) string {
	if raw == 0 {
		return ""
	}
	if id := in.rawID(raw, idSite); id != 0 && int(id) < len(in.sites) {
		return in.sites[id].Site.Func
	}
	return ""
}

// local gives a raw event the ids the converter knows in place of the
// probe ids the rewritten code passed (ids.go): its site's index in
// in.sites, and a region's Plan.Regions id as a region's begin's or
// end's Arg. An id no probe has becomes 0, no site and no region.
func (in *Instrumented) local(e avrt.Event) avrt.Event {
	if e.Site != 0 {
		e.Site = in.rawID(e.Site, idSite)
	}
	if e.Kind == avrt.KindBegin || e.Kind == avrt.KindFinish {
		e.Arg = uint64(in.rawID(uint32(e.Arg), idRegion))
	}
	return e
}

// rawID returns what a probe id of the given kind stands for, 0 if none.
func (in *Instrumented) rawID(id uint32, kind idKind) uint32 {
	if k, ok := in.raw[id]; ok && k.kind == kind {
		return k.n
	}
	return 0
}

// chanIDs gives a channel's events the id of the channel: its address,
// unless a channel was made at an address where an earlier one was (the
// garbage collector freed it), which then gets the address with its
// generation above it, addr | gen<<48, as the Delve recorder's chanObj
// numbers them. Otherwise the new channel would be the old one, closed
// or with the old one's messages.
type chanIDs struct {
	cur map[uint64]uint64 // address → id
	gen map[uint64]uint64 // address → generations made
}

func newChanIDs() *chanIDs {
	return &chanIDs{cur: make(map[uint64]uint64), gen: make(map[uint64]uint64)}
}

// of returns the object id of e, in the order of the raw events.
func (ci *chanIDs) of(e avrt.Event) uint64 {
	switch e.Kind {
	case avrt.KindMakeChan:
		if _, seen := ci.cur[e.Obj]; seen {
			ci.gen[e.Obj]++
			ci.cur[e.Obj] = e.Obj | ci.gen[e.Obj]<<48
		} else {
			ci.cur[e.Obj] = e.Obj
		}
	case avrt.KindSend, avrt.KindSent, avrt.KindRecv, avrt.KindRangeEnd, avrt.KindClose:
		if id, ok := ci.cur[e.Obj]; ok {
			return id
		}
		ci.cur[e.Obj] = e.Obj
	default:
		return e.Obj
	}
	return ci.cur[e.Obj]
}

func (c *converter) site(id uint32) rawSite {
	if int(id) < len(c.in.sites) {
		return c.in.sites[id]
	}
	return rawSite{}
}

// g returns the state of a goroutine, forking it from the root if no
// recorded go statement did. first is the kind of its first event: a
// goroutine whose parent is not known and that does not begin as a
// test's (avrt.TestBegin, TestGo) was started by code that is not
// rewritten, and trace.OutsideG forks it.
func (c *converter) g(id uint64, first avrt.Kind) *convG {
	if gs := c.gs[id]; gs != nil {
		return gs
	}
	gs := &convG{id: trace.GoID(id)}
	c.gs[id] = gs
	if !c.started[id] && id != mainG && first != avrt.KindTestBegin && first != avrt.KindTestGo {
		c.emit(c.outside(), trace.Event{Kind: trace.KindFork, Arg: id})
		return gs
	}
	if !c.started[id] {
		if m := c.gs[mainG]; id != mainG && m != nil && !m.ended && !m.pastInit {
			// The main goroutine has run package initialisation only,
			// which happens before every goroutine the program starts
			// after it: the tests', and the program's own.
			c.emit(m, trace.Event{Kind: trace.KindFork, Arg: id})
			return gs
		}
		if r := c.testsFrom; r != nil && !r.ended {
			// A goroutine that m.Run started, a test's, happens after
			// what TestMain did before it called m.Run (runTests).
			c.emit(r, trace.Event{Kind: trace.KindFork, Arg: id})
			return gs
		}
		c.emit(c.root(), trace.Event{Kind: trace.KindFork, Arg: id})
	}
	return gs
}

// outside returns the state of trace.OutsideG, which forks the
// goroutines that code not rewritten started. The root forks it, so that
// the root stays the trace's first goroutine, as the validator wants.
func (c *converter) outside() *convG {
	if gs := c.gs[uint64(trace.OutsideG)]; gs != nil {
		return gs
	}
	gs := &convG{id: trace.OutsideG}
	c.gs[uint64(trace.OutsideG)] = gs
	c.emit(c.root(), trace.Event{Kind: trace.KindFork, Arg: uint64(trace.OutsideG)})
	return gs
}

// root returns the state of the root goroutine, rootG, which forks the
// goroutines whose parent is not known.
func (c *converter) root() *convG {
	if !c.rootUp {
		c.rootUp = true
		c.gs[uint64(rootG)] = &convG{id: rootG}
	}
	return c.gs[uint64(rootG)]
}

// mainG is the runtime's id of the main goroutine, which runs package
// initialisation, then main (or the testing package's).
const mainG = 1

// endsInit reports whether fn, a site's function (its SSA name), is one
// that the main goroutine runs once package initialisation is over: a
// program's main, a TestMain, an example, or a literal in one of them.
// A function that an init calls (a constructor a package variable is
// set with, another module's) does not end it, though it is no init
// function: until one of these records an event, the main goroutine's
// events are initialisation, which every goroutine first seen then
// happens after.
func endsInit(fn string) bool {
	if strings.HasPrefix(fn, "(") {
		return false
	}
	name := fn[strings.LastIndexByte(fn, '.')+1:]
	name, _, _ = strings.Cut(name, "$")
	return name == "main" || name == "TestMain" || strings.HasPrefix(name, "Example")
}

func (c *converter) drop() { c.out.Dropped++ }

// object declares an object on first use.
func (c *converter) object(id trace.ObjID, kind trace.ObjKind, s rawSite, name string) {
	if _, ok := c.t.Objects[id]; ok {
		return
	}
	if name == "" {
		name = s.Name
	}
	if name == "" {
		name = fmt.Sprintf("%s@%s:%d", strings.TrimPrefix(kind.String(), "obj"), shortFile(s.Site.File), s.Site.Line)
	}
	c.t.Objects[id] = trace.Object{Kind: kind, Name: name}
}

func (c *converter) step(r avrt.Event) {
	gs := c.g(r.G, r.Kind)
	if gs.ended {
		c.drop()
		return
	}
	if r.Kind == avrt.KindParam {
		gs.params = append(gs.params, int64(r.Arg))
		return
	}
	params := gs.params
	gs.params = nil
	s := c.site(r.Site)
	if r.G == mainG && !gs.pastInit && r.Site != 0 && endsInit(s.Site.Func) {
		gs.pastInit = true
	}
	obj := trace.ObjID(r.Obj)
	e := trace.Event{Obj: obj, Site: trace.SiteID(r.Site)}
	switch r.Kind {
	case avrt.KindRead, avrt.KindReadValue, avrt.KindReadAddr, avrt.KindReadLen, avrt.KindWrite, avrt.KindMapRead, avrt.KindMapWrite, avrt.KindContents:
		name := ""
		if r.Kind == avrt.KindContents {
			name = s.Map + "[*]"
		}
		c.object(obj, trace.ObjVar, s, name)
		e.Kind = trace.KindRead
		switch r.Kind {
		case avrt.KindReadValue:
			e.Value, e.Flags = r.Arg, trace.HasValue
			if g := s.Guard; g != nil && !g.Len && !g.Returned {
				// The guard's comparisons give the range as the Delve
				// recorder's guardedRead does, with the values of the
				// parameters they compare with, which the rewritten code
				// records just before the read (KindParam).
				i := 0
				param := func(frame int, _ string) (int64, bool) {
					if frame != 0 || i >= len(params) {
						return 0, false
					}
					i++
					return params[i-1], true
				}
				if rg, ok := guardRange(g, int64(r.Arg), nil, param); ok {
					e.SetRange(rg)
				}
			}
		case avrt.KindReadAddr:
			e.Value, e.Arg, e.Flags = r.Arg, s.Size, trace.HasValue|trace.ValueIsAddr
		case avrt.KindReadLen:
			e.Value, e.Flags = r.Arg, trace.HasValue|trace.ValueIsLen
		case avrt.KindWrite, avrt.KindMapWrite:
			e.Kind, e.Flags = trace.KindWrite, s.Flags
			if s.Flags&trace.ValueConst != 0 {
				// A constant, known from the plan: the runtime records
				// no value (consts.go).
				e.Value, e.Flags = s.Value, e.Flags|trace.HasValue
			}
		}
		if e.Kind == trace.KindRead {
			e.Flags |= s.Flags & trace.Rechecks
		}
		c.emit(gs, e)
		if r.Kind == avrt.KindMapWrite && s.Map != "" {
			// A write of an element writes the map's contents too.
			m := trace.ObjID(r.Arg)
			c.object(m, trace.ObjVar, s, s.Map+"[*]")
			c.emit(gs, trace.Event{Kind: trace.KindWrite, Obj: m, Site: e.Site})
		}
	case avrt.KindAtomicLoad, avrt.KindAtomicStore, avrt.KindAtomicRMW:
		c.object(obj, trace.ObjVar, s, "")
		e.Kind = map[avrt.Kind]trace.Kind{avrt.KindAtomicLoad: trace.KindAtomicLoad, avrt.KindAtomicStore: trace.KindAtomicStore, avrt.KindAtomicRMW: trace.KindAtomicRMW}[r.Kind]
		if r.Kind == avrt.KindAtomicLoad && r.Arg == avrt.FailedCAS {
			// A CompareAndSwap that did not swap: it read the
			// variable, but gave the program no value of it, only
			// that it differed. It synchronises, and counts as
			// another goroutine's access between a region's, not as
			// one of a region's own (a spin lock's or a retry loop's
			// tries are no pair of reads meant to agree).
			e.Flags |= trace.Outside
		}
		// With the plain access the operation also makes, as the Delve
		// recorder's emitAtomic records it (shadow.go).
		c.emitAtomic(gs, e)
	case avrt.KindAcquire, avrt.KindRelease, avrt.KindRAcquire, avrt.KindRRelease:
		c.lock(gs, r.Kind, e, s)
	case avrt.KindFork:
		child, ok := c.children[r.Arg]
		if !ok || c.gs[child] != nil || c.started[child] {
			c.drop() // a child that never ran, or one seen already
			return
		}
		c.started[child] = true
		e.Obj, e.Kind, e.Arg = 0, trace.KindFork, child
		c.emit(gs, e)
	case avrt.KindStart:
	case avrt.KindEnd:
		c.end(gs)
	case avrt.KindSend, avrt.KindRecv, avrt.KindRangeEnd, avrt.KindClose:
		c.channel(gs, r.Kind, e, s, r.Arg)
	case avrt.KindSent:
		c.channel(gs, avrt.KindSend, e, s, r.Arg)
	case avrt.KindMakeChan, avrt.KindMade:
		// A new channel, or a new object: its id, or its variables', is
		// new if its address is not (chanIDs, varIDs).
	case avrt.KindTestBegin, avrt.KindTestEnd:
		c.testOrder(gs, r.Kind, e, s)
	case avrt.KindTestCleanup, avrt.KindTestDone:
		c.testCleanups(gs, r.Kind, e, s)
	case avrt.KindRunTests, avrt.KindRanTests:
		c.runTests(gs, r.Kind, e, s)
	case avrt.KindTestFork:
		c.testFork(gs, e, s, r.Arg)
	case avrt.KindTestJoin, avrt.KindTestParallel, avrt.KindTestResume, avrt.KindTestReturn:
		c.subtest(gs, r.Kind, e, s)
	case avrt.KindWGAdd, avrt.KindWGDone, avrt.KindWGWait:
		c.object(obj, trace.ObjWaitGroup, s, "")
		n := c.wg[obj]
		switch r.Kind {
		case avrt.KindWGAdd:
			e.Kind, e.Arg = trace.KindWGAdd, r.Arg
			n += int64(r.Arg)
		case avrt.KindWGDone:
			e.Kind = trace.KindWGDone
			n--
		default:
			e.Kind = trace.KindWGWait
		}
		if n < 0 || e.Kind == trace.KindWGWait && n != 0 {
			c.drop()
			return
		}
		c.wg[obj] = n
		c.emit(gs, e)
	case avrt.KindCondWait, avrt.KindCondSignal, avrt.KindCondBroadcast:
		c.object(obj, trace.ObjCond, s, "")
		switch r.Kind {
		case avrt.KindCondWait:
			if !c.signaled[obj] {
				c.drop()
				return
			}
			e.Kind = trace.KindCondWait
		case avrt.KindCondSignal:
			e.Kind = trace.KindCondSignal
		default:
			e.Kind = trace.KindCondBroadcast
		}
		c.signaled[obj] = true
		c.emit(gs, e)
	case avrt.KindPoolPut, avrt.KindPoolGet:
		// An item of a sync.Pool: a Put is a Cond's Signal of it, and
		// the Get that returns it a Wait that returns after it (the
		// race detector's release and acquire of the item). Its id
		// is the item's address with the top two bits set, which no
		// variable's id has (varIDs). A Get of an item no Put put,
		// which the pool's New made, is new memory: no order.
		obj = trace.ObjID(r.Obj | 3<<62)
		if r.Kind == avrt.KindPoolGet {
			if !c.signaled[obj] {
				return
			}
			e.Kind = trace.KindCondWait
		} else {
			e.Kind = trace.KindCondSignal
		}
		c.object(obj, trace.ObjCond, s, "item of "+s.Name)
		e.Obj = obj
		c.signaled[obj] = true
		c.emit(gs, e)
	case avrt.KindOnce:
		if id, ok := c.onceIDs[r.Obj]; ok {
			obj = id
		}
		if r.Arg == 1 && c.onceRan[obj] {
			// A Once that runs its function where one ran before: the
			// garbage collector gave a new Once the old one's address
			// (numbered as chanIDs numbers channels).
			c.onceGen[r.Obj]++
			obj = trace.ObjID(r.Obj | c.onceGen[r.Obj]<<48)
			c.onceIDs[r.Obj] = obj
		}
		e.Obj = obj
		c.object(obj, trace.ObjOnce, s, "")
		if r.Arg == 0 && !c.onceRan[obj] {
			c.drop()
			return
		}
		c.onceRan[obj] = true
		e.Kind, e.Arg = trace.KindOnceDo, r.Arg
		c.emit(gs, e)
	case avrt.KindBranch:
		gs.br += 1 + uint32(r.Arg)
	case avrt.KindBegin:
		c.begin(gs, int(r.Arg), e.Site)
	case avrt.KindFinish:
		c.finishRegion(gs, int(r.Arg))
	case avrt.KindTestGo:
		// It only tells, as its goroutine's first event, a test's
		// goroutine from one that other code started (g).
	default:
		c.drop()
	}
}

func (c *converter) lock(gs *convG, k avrt.Kind, e trace.Event, s rawSite) {
	kind := s.Obj
	if kind != trace.ObjRWMutex {
		kind = trace.ObjMutex
	}
	c.object(e.Obj, kind, s, "")
	_, held := c.holder[e.Obj]
	switch k {
	case avrt.KindAcquire:
		if held || c.readers[e.Obj] > 0 {
			c.drop()
			return
		}
		c.holder[e.Obj] = gs.id
		e.Kind = trace.KindAcquire
	case avrt.KindRelease:
		// By its holder, or by another goroutine: Go lets one goroutine
		// unlock what another locked (a lock handed over), and the
		// lock is released from its holder.
		if !held {
			c.drop()
			return
		}
		delete(c.holder, e.Obj)
		e.Kind = trace.KindRelease
	case avrt.KindRAcquire:
		if held {
			c.drop()
			return
		}
		if gs.rholds == nil {
			gs.rholds = make(map[trace.ObjID]int)
		}
		gs.rholds[e.Obj]++
		c.readers[e.Obj]++
		e.Kind = trace.KindRAcquire
	case avrt.KindRRelease:
		from := gs
		if gs.rholds[e.Obj] == 0 {
			// Another goroutine's read-lock, handed over: one of its
			// readers' (which one is not known).
			from = nil
			for _, o := range c.gs {
				if o.rholds[e.Obj] > 0 && (from == nil || o.id < from.id) {
					from = o
				}
			}
			if from == nil {
				c.drop()
				return
			}
		}
		from.rholds[e.Obj]--
		c.readers[e.Obj]--
		e.Kind = trace.KindRRelease
	}
	c.emit(gs, e)
}

// channel numbers a channel's messages in the order their sends and
// receives were recorded: a receive takes the oldest message not taken,
// or, if none is left and the channel is closed, returns closed. A
// receive with neither took a message that code outside the packages
// under test sent, and is left out. The channel is declared with the
// capacity capacity its first recorded operation saw.
func (c *converter) channel(gs *convG, k avrt.Kind, e trace.Event, s rawSite, capacity uint64) {
	ch := c.chans[e.Obj]
	if ch == nil {
		c.object(e.Obj, trace.ObjChan, s, "")
		ch = &convChan{cap: capacity}
		c.chans[e.Obj] = ch
		c.setCap(e.Obj, ch)
	}
	switch k {
	case avrt.KindSend:
		if ch.closed {
			c.drop()
			return
		}
		c.chanAccess(gs, e, false)
		ch.sent++
		e.Kind, e.Arg = trace.KindSend, ch.sent
		c.emit(gs, e)
		if c.out.Invalid == "" {
			gs.waits = &sentMsg{e.Obj, ch.sent}
		}
		return
	case avrt.KindRecv, avrt.KindRangeEnd:
		if ch.received >= ch.sent && !ch.closed {
			c.hoistSent(e.Obj)
		}
		switch {
		case ch.received < ch.sent && k == avrt.KindRecv:
			ch.received++
			e.Kind, e.Arg = trace.KindRecv, ch.received
		case ch.closed && ch.received >= ch.sent:
			e.Kind, e.Arg = trace.KindRecv, 0
		default:
			c.drop()
			return
		}
	case avrt.KindClose:
		if ch.closed {
			c.drop()
			return
		}
		c.chanAccess(gs, e, true)
		ch.closed = true
		e.Kind = trace.KindClose
	}
	c.emit(gs, e)
}

// hoistSent steps, before a receive from channel id that finds no
// message, the next send of a select's case on it recorded later: its
// probe runs after the send, at the start of the case's body, and may
// come after the probe of the receive that took its message. It is
// stepped if its goroutine's previous event is in the trace already (the
// send is then that goroutine's next event), as sendDone steps a
// receive early.
func (c *converter) hoistSent(id trace.ObjID) {
	list, i := c.sents[id], c.sentAt[id]
	for i < len(list) && (list[i].ev.Seq <= c.cur || c.hoisted[list[i].ev.Seq]) {
		i++
	}
	c.sentAt[id] = i
	if i == len(list) {
		return
	}
	r := list[i]
	if r.prev >= c.cur && !c.hoisted[r.prev] {
		return
	}
	c.hoisted[r.ev.Seq] = true
	c.step(r.ev)
}

// testsObj is the WaitGroup that stands for the testing package's running
// of the top-level tests one after another. Its id is no address a
// program can have.
const testsObj trace.ObjID = 1<<63 | 0x7e57

// testOrder records that a top-level test that runs alone begins or
// ends (avrt.TestBegin; avrt.TestDone, once its cleanups ran) as
// operations of testsObj: a test waits for the counter to be zero, then
// adds one, and its end is a Done. So each test happens after the ones
// before it, cleanups included, as the testing package makes it, and its
// accesses cannot be predicted to interleave theirs. A test that begins
// while another's count is up (which the testing package does not do for
// such tests) is left unordered. Any top-level test's return
// (avrt.TestEnd) opens its barrier, if a subtest of it called t.Parallel
// (subtest).
func (c *converter) testOrder(gs *convG, k avrt.Kind, e trace.Event, s rawSite) {
	if k == avrt.KindTestEnd {
		// The test's function returned: its parallel subtests go on.
		// The rest of its end waits for its cleanups (testCleanups).
		c.testBarrier(gs, e.Site, s)
		return
	}
	if k == avrt.KindTestBegin && gs == c.testsFrom {
		// An example, which the testing package runs on the goroutine
		// that called m.Run: the goroutines first seen now may be tests'
		// that outlived them, which do not happen after the example.
		c.testsFrom = nil
	}
	c.object(testsObj, trace.ObjWaitGroup, s, "tests, one after another")
	e.Obj = testsObj
	switch {
	case k == avrt.KindTestBegin && c.wg[testsObj] == 0 && !gs.inTest:
		e.Kind = trace.KindWGWait
		c.emit(gs, e)
		e.Kind, e.Arg = trace.KindWGAdd, 1
		c.emit(gs, e)
		c.wg[testsObj] = 1
		gs.inTest = true
	case k == avrt.KindTestDone && gs.inTest:
		e.Kind = trace.KindWGDone
		c.emit(gs, e)
		c.wg[testsObj] = 0
		gs.inTest = false
	default:
		c.drop()
	}
}

// testsEndObj is the WaitGroup that stands for m.Run's waiting for the
// tests it runs, for TestMain to go on after them.
const testsEndObj trace.ObjID = 1<<63 | 0x7e59

// runTests records TestMain's call of m.Run (avrt.RunTests) and its
// return. While the call runs, the goroutines first seen, which no
// recorded go statement started (the tests', which the testing package
// starts), are forked from the goroutine that called it (g), at its
// call, as the Delve recorder sees T.Run do on the main goroutine: so
// they happen after what TestMain did before the call, such as setting
// a package variable the tests read. Each top-level test's end, once
// its cleanups ran, is an Add and a Done of testsEndObj (testReturned),
// and the call's
// return a wait for it: so TestMain goes on after the tests, parallel
// ones included, and may read what they wrote.
func (c *converter) runTests(gs *convG, k avrt.Kind, e trace.Event, s rawSite) {
	switch {
	case k == avrt.KindRunTests && !gs.runsTests:
		gs.runsTests = true
		c.runningTests++
		c.testsFrom = gs
	case k == avrt.KindRanTests && gs.runsTests:
		gs.runsTests = false
		c.runningTests--
		if c.testsFrom == gs {
			c.testsFrom = nil
		}
		if _, ok := c.t.Objects[testsEndObj]; ok && c.wg[testsEndObj] == 0 {
			e.Kind, e.Obj = trace.KindWGWait, testsEndObj
			c.emit(gs, e)
		}
	}
}

// testReturned records, while a TestMain's call of m.Run runs, that a
// top-level test ended, its cleanups run: an Add and a Done of
// testsEndObj, which the call's return waits for (runTests).
func (c *converter) testReturned(gs *convG, e trace.Event, s rawSite) {
	if c.runningTests == 0 || gs.runsTests {
		return // no TestMain, or an example on TestMain's goroutine
	}
	c.object(testsEndObj, trace.ObjWaitGroup, s, "the tests m.Run waits for")
	e.Obj, e.Kind, e.Arg = testsEndObj, trace.KindWGAdd, 1
	c.emit(gs, e)
	e.Kind, e.Arg = trace.KindWGDone, 0
	c.emit(gs, e)
}

// testFork records that a test starts a subtest with t.Run (avrt.Sub),
// as the Delve recorder's testHook and testFork do: an Add of the run's
// object, then the fork of the subtest's goroutine.
func (c *converter) testFork(gs *convG, e trace.Event, s rawSite, token uint64) {
	child, ok := c.children[token]
	if !ok || c.gs[child] != nil || c.started[child] {
		c.drop() // a subtest that never ran (-run), or one seen already
		gs.test.runs = append(gs.test.runs, 0)
		return
	}
	obj := testRunObjs | trace.ObjID(token)
	c.object(obj, trace.ObjWaitGroup, s, "a test's run")
	e.Obj, e.Kind, e.Arg = obj, trace.KindWGAdd, 1
	c.emit(gs, e)
	c.wg[obj] = 1
	gs.test.runs = append(gs.test.runs, obj)
	c.started[child] = true
	c.gs[child] = &convG{id: trace.GoID(child), test: testState{run: obj, parent: gs.id}}
	c.emit(gs, trace.Event{Kind: trace.KindFork, Arg: child, Site: e.Site})
}

// subtest records the rest of a subtest's order (testorder.go): its parent
// going on after t.Run (a wait for the run's object), its signal to the
// parent when it calls t.Parallel or returns (the Done), the opening of
// its barrier when it returns, and a parallel test going on after its
// parent's barrier, or a top-level one after the tests that run alone.
func (c *converter) subtest(gs *convG, k avrt.Kind, e trace.Event, s rawSite) {
	switch k {
	case avrt.KindTestJoin:
		n := len(gs.test.runs)
		if n == 0 {
			c.drop()
			return
		}
		obj := gs.test.runs[n-1]
		gs.test.runs = gs.test.runs[:n-1]
		if obj == 0 || c.wg[obj] != 0 {
			c.drop() // not started, or it did not signal (FailNow of a parent)
			return
		}
		e.Kind, e.Obj = trace.KindWGWait, obj
		c.emit(gs, e)
	case avrt.KindTestParallel:
		if p := c.gs[uint64(gs.test.parent)]; p != nil && gs.test.run != 0 {
			p.test.parallelKids = true
		}
		c.testSignal(gs, e)
	case avrt.KindTestReturn:
		// Its signal waits for its cleanups (testCleanups).
		c.testBarrier(gs, e.Site, s)
	case avrt.KindTestResume:
		obj := testsObj
		if gs.test.run != 0 {
			p := c.gs[uint64(gs.test.parent)]
			if p == nil || p.test.barrier == 0 {
				c.drop()
				return
			}
			obj = p.test.barrier
		} else if _, ok := c.t.Objects[testsObj]; !ok || c.wg[testsObj] != 0 {
			c.drop()
			return
		}
		e.Kind, e.Obj = trace.KindWGWait, obj
		c.emit(gs, e)
	}
}

// testCleanups records the order of a test's cleanups, which the testing
// package runs in the test's goroutine once the test's function
// returned and its parallel subtests ended (avrt.TestCleanup), and
// before it signals its parent (avrt.TestDone):
//   - their start waits for the ends of the test's parallel subtests;
//   - their end is the test's end: a subtest's signal to its parent, or,
//     if it signalled in t.Parallel, an Add and a Done of its parent's
//     testSubsObjs; a top-level test's end in the tests' order
//     (testOrder) and in TestMain's wait for the tests (testReturned).
//
// So what a cleanup does, such as restoring a setting the test changed,
// happens after the subtests and before what follows the test.
func (c *converter) testCleanups(gs *convG, k avrt.Kind, e trace.Event, s rawSite) {
	if k == avrt.KindTestCleanup {
		obj := testSubsObjs | trace.ObjID(gs.id)
		if _, ok := c.t.Objects[obj]; !ok || c.wg[obj] != 0 {
			c.drop()
			return
		}
		e.Kind, e.Obj = trace.KindWGWait, obj
		c.emit(gs, e)
		return
	}
	if gs.test.run == 0 {
		// A top-level test.
		c.testReturned(gs, e, s)
		c.testOrder(gs, k, e, s)
		return
	}
	if !gs.test.signalled {
		c.testSignal(gs, e)
		return
	}
	obj := testSubsObjs | trace.ObjID(gs.test.parent)
	c.object(obj, trace.ObjWaitGroup, s, "a test's parallel subtests' end")
	e.Obj, e.Kind, e.Arg = obj, trace.KindWGAdd, 1
	c.emit(gs, e)
	e.Kind, e.Arg = trace.KindWGDone, 0
	c.emit(gs, e)
}

// testSignal records a subtest's signal to its parent, once.
func (c *converter) testSignal(gs *convG, e trace.Event) {
	if gs.test.run == 0 || gs.test.signalled {
		c.drop()
		return
	}
	e.Kind, e.Obj = trace.KindWGDone, gs.test.run
	c.emit(gs, e)
	c.wg[gs.test.run]--
	gs.test.signalled = true
}

// testBarrier opens the barrier of a test some of whose subtests called
// t.Parallel, once: an Add and a Done of its object.
func (c *converter) testBarrier(gs *convG, site trace.SiteID, s rawSite) {
	if !gs.test.parallelKids || gs.test.barrier != 0 {
		return
	}
	obj := testBarrierObjs | trace.ObjID(gs.id)
	c.object(obj, trace.ObjWaitGroup, s, "a test's parallel subtests' start")
	gs.test.barrier = obj
	c.emit(gs, trace.Event{Kind: trace.KindWGAdd, Arg: 1, Obj: obj, Site: site})
	c.emit(gs, trace.Event{Kind: trace.KindWGDone, Obj: obj, Site: site})
}

// begin opens an instance of region id, as the Delve recorder's
// openRegion does: a region that begins while another of the same
// function, with the same evidence of intent or none, is open joins it;
// one that begins again while it is open is a loop's next iteration.
func (c *converter) begin(gs *convG, id int, site trace.SiteID) {
	if id < 1 || id > len(c.in.plan.Regions) {
		c.drop()
		return
	}
	rp := c.in.plan.Regions[id-1]
	for k := len(gs.regions) - 1; k >= 0; k-- {
		o := &gs.regions[k]
		if o.fn != rp.Func || o.intended != rp.Intent.Confirms() {
			continue
		}
		if slices.Contains(o.covers, id) {
			c.endRegions(gs, k)
			break
		}
		o.covers = append(o.covers, id)
		return
	}
	c.inst[id]++
	inst := c.inst[id]
	gs.regions = append(gs.regions, convRegion{id: id, inst: inst, covers: []int{id}, fn: rp.Func, intended: rp.Intent.Confirms()})
	e := trace.Event{Kind: trace.KindRegionBegin, Site: site, Region: trace.RegionID(id), Inst: inst}
	var at [2]trace.SiteID
	for k, sp := range rp.Evidence {
		if sp.File != "" {
			at[k] = trace.SiteID(c.in.site(trace.Site{File: sp.File, Line: sp.Line.Line, Col: sp.Col, Func: rp.Func}, "", 0, 0))
		}
	}
	for len(c.t.Sites) < len(c.in.sites) {
		c.t.Sites = append(c.t.Sites, c.in.sites[len(c.t.Sites)].Site)
	}
	e.SetIntent(rp.Intent, at[0], at[1])
	c.emit(gs, e)
}

// finishRegion ends region id's part in the open instance that stands
// for it; the instance ends when every region it stands for has.
func (c *converter) finishRegion(gs *convG, id int) {
	for k := len(gs.regions) - 1; k >= 0; k-- {
		o := &gs.regions[k]
		i := slices.Index(o.covers, id)
		if i < 0 {
			continue
		}
		o.covers = slices.Delete(o.covers, i, i+1)
		if len(o.covers) == 0 {
			c.endRegions(gs, k)
		}
		return
	}
}

// endRegions ends the goroutine's open regions from the keep-th on,
// innermost first.
func (c *converter) endRegions(gs *convG, keep int) {
	for len(gs.regions) > keep {
		o := gs.regions[len(gs.regions)-1]
		gs.regions = gs.regions[:len(gs.regions)-1]
		c.emit(gs, trace.Event{Kind: trace.KindRegionEnd, Region: trace.RegionID(o.id), Inst: o.inst})
	}
}

func (c *converter) end(gs *convG) {
	c.endRegions(gs, 0)
	c.emit(gs, trace.Event{Kind: trace.KindEnd})
	gs.ended = true
}

// finish closes the regions still open when the run ended.
func (c *converter) finish() {
	ids := make([]uint64, 0, len(c.gs))
	for id := range c.gs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if gs := c.gs[id]; !gs.ended {
			c.endRegions(gs, 0)
		}
	}
}

// derivedID returns the id of the object key of the object of, declaring
// it on first use. Its id is past every address.
func (c *converter) derivedID(of trace.ObjID, key string, o trace.Object) trace.ObjID {
	k := derivedObj{of, key}
	if id, ok := c.derived[k]; ok {
		return id
	}
	id := trace.ObjID(1<<63 | uint64(len(c.derived)+1))
	c.derived[k] = id
	c.t.Objects[id] = o
	return id
}

// chanAccess records the read (a send) or write (a close) of the
// channel's own variable that the send or close e makes (shadow.go).
func (c *converter) chanAccess(gs *convG, e trace.Event, write bool) {
	v := c.derivedID(e.Obj, chanStateKey, trace.Object{Kind: trace.ObjVar, Name: c.t.Objects[e.Obj].Name})
	a := trace.Event{Kind: trace.KindRead, Obj: v, Site: e.Site}
	if write {
		a.Kind = trace.KindWrite
	}
	c.emit(gs, a)
}

// emitAtomic records the atomic operation e and its plain access, which
// is outside every region, inside a critical section of the variable's
// own lock (shadow.go).
func (c *converter) emitAtomic(gs *convG, e trace.Event) {
	lock := c.derivedID(e.Obj, atomicLockKey, trace.Object{Kind: trace.ObjMutex, Name: "atomic " + c.t.Objects[e.Obj].Name})
	for _, x := range atomicEvents(e, lock) {
		c.emitIn(gs, x.e, x.inRegion)
	}
}

// emit appends an event of gs with its region, as the Delve recorder's
// emit does, if it keeps the trace a possible execution.
func (c *converter) emit(gs *convG, e trace.Event) { c.emitIn(gs, e, true) }

// setCap declares the channel's capacity.
func (c *converter) setCap(id trace.ObjID, ch *convChan) {
	o := c.t.Objects[id]
	o.Cap = int(min(ch.cap, 1<<31))
	c.t.Objects[id] = o
}

// sendDone is called before the next event of a goroutine whose last
// event was the send of message m. In the trace model (and the Go
// memory model) a send of message k on a channel of capacity n completes
// only after receive k-n, under the channel's lock inside the runtime.
// The runtime's probes see a send before it and a receive after it
// returned, so a sender can go on (and record its next event) before the
// probe of the receive it waited for: its message taken by a receiver
// not yet back from the runtime, or the next send of a buffered one let
// in by a receive whose probe has not run yet. Such a trace has no run
// under the model: the precise stage finds its synchronisation in a
// cycle.
//
// The receive did happen before the sender went on, and its goroutine
// recorded nothing between it and its probe, so the receives still
// owed are stepped here, before the sender's event, in the order of
// their probes, each if its goroutine's previous event is already in
// the trace (its probe the goroutine's next one). If that does not
// suffice (a receive not recorded, one of a goroutine that recorded more
// since), the channel is declared with the least capacity that lets the
// sender go on here, as if it buffered the messages whose receives are
// not in the trace yet: happens-before is lost, as with unrecorded
// synchronisation (a prediction may rely on an order the rendezvous
// forbids), and the trace stays a possible execution.
func (c *converter) sendDone(m sentMsg) {
	ch := c.chans[m.ch]
	if ch == nil {
		return
	}
	for m.msg > ch.received+ch.cap && c.out.Invalid == "" {
		list, i := c.recvs[m.ch], c.recvAt[m.ch]
		for i < len(list) && (list[i].ev.Seq <= c.cur || c.hoisted[list[i].ev.Seq]) {
			i++
		}
		c.recvAt[m.ch] = i
		if i == len(list) {
			break
		}
		r := list[i]
		if r.ev.Kind != avrt.KindRecv || r.prev >= c.cur && !c.hoisted[r.prev] {
			break
		}
		before := ch.received
		c.hoisted[r.ev.Seq] = true
		c.step(r.ev)
		if ch.received == before {
			break
		}
	}
	if c.out.Invalid != "" || m.msg <= ch.received+ch.cap {
		return
	}
	ch.cap = m.msg - ch.received
	c.out.Widened++
	c.setCap(m.ch, ch)
}

// emitIn is emit, with the event outside every region unless inRegion.
func (c *converter) emitIn(gs *convG, e trace.Event, inRegion bool) {
	if c.out.Invalid != "" {
		return
	}
	if gs.waits != nil {
		c.sendDone(*gs.waits)
		gs.waits = nil
	}
	e.G = gs.id
	e.Seq = uint64(len(c.t.Events))
	if inRegion && e.Kind != trace.KindRegionBegin && e.Kind != trace.KindRegionEnd && len(gs.regions) > 0 {
		o := gs.regions[0]
		for _, in := range gs.regions {
			if in.intended {
				o = in
				break
			}
		}
		e.Region, e.Inst = trace.RegionID(o.id), o.inst
	}
	if e.Kind.IsAccess() || e.Kind == trace.KindAcquire || e.Kind == trace.KindRelease {
		e.Branches, gs.br = gs.br, 0
	}
	if err := c.v.Step(e); err != nil {
		c.out.Invalid = oneLine(err)
		return
	}
	c.t.Events = append(c.t.Events, e)
}
