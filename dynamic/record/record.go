package record

import (
	"context"
	"errors"
	"fmt"
	"github.com/avcheck/avcheck/internal/children"
	"go/constant"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/proc"
)

// Options says what to run under the recorder.
type Options struct {
	Binary string   // the program or test binary, built by Build
	Args   []string // its arguments
	Dir    string   // its working directory
	// Output receives the program's standard output and error; nil
	// discards them.
	Output io.Writer
	// Timeout, if positive, bounds the program's run: past it, the
	// program is killed and the trace so far returned.
	Timeout time.Duration
	// Progress, when set, is called from time to time with the number of
	// events recorded so far.
	Progress func(events int)
	// MaxEvents bounds the events the instrumenting recorder records
	// (DefaultMaxEvents if 0): past it, or once its file would take more
	// than a quarter of the free space of the temporary directory (other
	// recordings may run beside it), the recording
	// stops, the program runs on, and the trace is what it did up to then
	// (Outcome.Cut).
	MaxEvents int64
	// BeforeConvert, when set, is called by the instrumenting recorder
	// once the program has ended, before its raw events (as many as
	// events) are converted into the trace in memory: the caller may
	// wait there for memory that other recordings hold.
	BeforeConvert func(events int64)
}

// DefaultMaxEvents is the bound of Options.MaxEvents: 800 MB of raw
// events on disk, and a trace that prediction holds in a few gigabytes.
const DefaultMaxEvents = 20_000_000

// Outcome says how the recorded run ended, in one line for people.
type Outcome struct {
	// Complete says the program ran to its end by itself (with any exit
	// status); otherwise the recorder stopped it.
	Complete bool
	Status   int // exit status, when Complete
	// Message is one line: "the program exited with status 1", "the
	// program ran past its time limit and was killed", ...
	Message string
	// Invalid, if not empty, is why recording stopped early: the first
	// event that would have made the trace an impossible execution.
	Invalid string
	// Unevaluated counts probes whose address could not be evaluated.
	Unevaluated int
	// ProbeHits counts the stops at a probed line of the packages under
	// test, whether or not they recorded an access.
	ProbeHits int
	// Unrecorded lists the accesses of the packages under test in the
	// functions the run entered that were not recorded, with why
	// (unrecorded.go).
	Unrecorded []Unprobed
	// PID is the process the recorder ran, killed by the time Record
	// returns.
	PID int
	// Stops counts the times the program stopped at a breakpoint: each
	// costs a round trip through the debugger, the bulk of a recording's
	// time.
	Stops int
	// Cut, if not empty, says why the recording stopped before the
	// program ended (Options.MaxEvents): the trace is the run up to then.
	Cut string
	// CutAtLimit says the recording stopped at Options.MaxEvents (not
	// for want of disk). Tests and Reached then tell, for the
	// instrumenting recorder, the package's top-level tests (their
	// names, as -test.run matches them) and those the recording
	// reached before it stopped: the tests that ended, and those that
	// ran on at the cut, but not those waiting in t.Parallel, which
	// had not begun their work.
	CutAtLimit bool
	Tests      []string
	Reached    []string
	// NotBuilt says the package did not compile, so nothing ran: the
	// caller has shown the compiler's messages.
	NotBuilt bool
}

// ErrPtrace is returned when the system does not allow the recorder to
// trace the program.
var ErrPtrace = children.ErrPtrace

// hook is a probe inside the runtime, the sync package or the testing
// package: at the entry of function fn, or at the lines of fn whose code
// (trimmed, less any comment) is line.
type hook struct {
	fn   string
	line string // "" for fn's entry
	hook hookKind
}

// runtimeHooks are the probes of channels and Once (chans.go).
var runtimeHooks = []hook{
	{"runtime.send", "", hookSendDirect},
	{"runtime.recv", "", hookRecvDirect},
	{"runtime.chanbuf", "", hookChanBuf},
	{"runtime.closechan", "c.closed = 1", hookClosed},
	{"runtime.chanrecv", "return true, false", hookRecvClosed},
	{"sync.(*Once).doSlow", "f()", hookOnceRun},
}

// rootG is the goroutine standing for the program itself: it forks every
// goroutine whose parent the plan does not know, such as the test's own
// goroutine, so that every goroutine is created before it runs.
const rootG = trace.RootG

// The sync methods probed at their entry; their receivers are named as in
// the standard library's source.
var syncFuncs = [...]string{
	"sync.(*Mutex).Lock", "sync.(*Mutex).Unlock",
	"sync.(*RWMutex).Lock", "sync.(*RWMutex).Unlock",
	"sync.(*RWMutex).RLock", "sync.(*RWMutex).RUnlock",
	"sync.(*WaitGroup).Add", "sync.(*WaitGroup).Done", "sync.(*WaitGroup).Wait",
	"sync.(*WaitGroup).Go",
	"sync.(*Cond).Wait", "sync.(*Cond).Signal", "sync.(*Cond).Broadcast",
	"sync.(*Once).Do",
	"runtime.selectgo", "runtime.closechan",
	"runtime.goexit1",
}

// hookKind names the probes inside the runtime and the sync package that
// act for any goroutine, tracked or not (see chans.go).
type hookKind uint8

const (
	hookNone       hookKind = iota
	hookSendDirect          // runtime.send: a sender hands over to a waiting receiver
	hookRecvDirect          // runtime.recv: a receiver takes a waiting sender's message
	hookChanBuf             // runtime.chanbuf: a message enters or leaves a buffer
	hookClosed              // closechan's line setting c.closed
	hookRecvClosed          // chanrecv's returns of a closed channel's receive
	hookOnceRun             // sync.(*Once).doSlow's line calling f
	hookTestFork            // the tests' order (testorder.go)
	hookTestJoin
	hookTestSignal
	hookTestBarrier
	hookTestResume
	hookTestCleanup
)

// Record runs the binary under the debugger with breakpoints at the
// plan's probes and returns the trace of what it did. It stops the program
// when ctx is done, and always kills it before returning. The trace is
// valid even when the run was cut short: it holds the events up to then.
func Record(ctx context.Context, plan *Plan, opts Options) (*trace.Trace, Outcome, error) {
	grp, end, err := children.Launch(opts.Binary, opts.Args, opts.Dir, opts.Output)
	if err != nil {
		return nil, Outcome{}, err
	}
	defer end()
	pid := grp.Selected.Pid()
	r := newRecorder(plan, grp.Selected, opts.Progress)
	if err := r.setBreakpoints(); err != nil {
		return r.t, Outcome{Message: "recording failed"}, err
	}

	// The time limit counts from the launch, not from the wait for the
	// recording lock.
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	stopDone := make(chan struct{})
	defer close(stopDone)
	go func() {
		select {
		case <-ctx.Done():
			_ = grp.RequestManualStop()
		case <-stopDone:
		}
	}()

	oc := Outcome{PID: pid}
	for ctx.Err() == nil {
		err := grp.Continue()
		var exited proc.ErrProcessExited
		if errors.As(err, &exited) {
			oc.Complete, oc.Status = true, exited.Status
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			r.finish()
			return r.t, Outcome{Message: "recording stopped: " + oneLine(err), PID: pid, Stops: oc.Stops}, nil
		}
		if ctx.Err() != nil {
			// The stop RequestManualStop asked for is no probe's: a
			// thread may stand at a probe's address without having hit
			// it, or after its hit was recorded, and taking it as a hit
			// recorded events that did not happen (a release of a lock
			// not held, after an interrupt). The trace ends at the last
			// real stop, a valid prefix.
			break
		}
		oc.Stops++
		r.stop()
		if r.invalid != "" {
			break
		}
	}
	r.finish()
	switch {
	case oc.Complete && oc.Status == 0:
		oc.Message = "the program exited normally"
	case oc.Complete && oc.Status == 1:
		oc.Message = "the program exited with status 1 (a test failed or it reported an error; see its output above)"
	case oc.Complete && oc.Status == 2:
		oc.Message = "the program exited with status 2 (a panic or a fatal error such as a deadlock; see its output above)"
	case oc.Complete:
		oc.Message = fmt.Sprintf("the program exited with status %d", oc.Status)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		oc.Message = "the program ran past its time limit and was killed"
	case ctx.Err() != nil:
		oc.Message = "interrupted: the program was killed"
	default:
		oc.Message = "recording stopped at an event that makes the trace invalid; the program was killed"
	}
	oc.Invalid = r.invalid
	oc.Unevaluated = r.unevaluated
	oc.ProbeHits = r.probeHits
	oc.Unrecorded = r.unrecorded()
	return r.t, oc, nil
}

func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// bpRole is what a breakpoint address stands for.
type bpRole struct {
	line   Line
	isGo   bool // a go statement in the function at this address
	lineBP bool // a plan line (accesses, regions, go statements)
	syncFn string
	hook   hookKind
	reach  bool // only tells that its function was entered (unrecorded.go)
}

type recorder struct {
	plan         *Plan
	tgt          *proc.Target
	progress     func(int)
	t            *trace.Trace
	v            *trace.Validator
	sites        map[trace.Site]trace.SiteID
	roles        map[uint64]bpRole
	gs           map[trace.GoID]*gstate
	inst         map[int]uint64 // region id -> last instance
	forks        []pendingFork
	chans        map[uint64]*chanState
	chanGen      map[uint64]uint64 // channel address -> generations seen
	onceGen      map[uint64]uint64 // Once address -> generations seen
	wgGoLine     Line              // the go statement in WaitGroup.Go
	regionFns    map[uint64][]int  // function entry -> the regions in it
	entryLines   map[uint64]int    // function entry -> its line
	lay          layout
	signalled    map[trace.ObjID]bool // Conds with a recorded Signal or Broadcast
	onceRan      map[trace.ObjID]bool // Onces with a recorded Do that ran the function
	onceRunner   map[trace.ObjID]trace.GoID
	mapElems     map[mapElemKey]trace.ObjID // map elements' ids (maps.go)
	rootUp       bool
	invalid      string
	unevaluated  int
	lastProgress time.Time
	probeHits    int
	// unprobed are the accesses not recorded (unrecorded.go): the plan's,
	// and the probes of the lines without an instruction; reachAt maps
	// the entries of their functions to the functions, and reached
	// holds those the run entered.
	unprobed []Unprobed
	reachAt  map[uint64]string
	reached  map[string]bool
	// testRuns counts the T.Run calls seen, and testAdded holds their
	// objects whose Add is recorded (testorder.go).
	testRuns  uint64
	testAdded map[trace.ObjID]bool
}

type gstate struct {
	id      trace.GoID
	ended   bool
	pending []trace.Event // acquires and waits, emitted at the next stop
	// after holds the writes made once a call returned, emitted at the
	// next stop in their frame or a caller's (flushAfter).
	after   []afterWrite
	regions []openRegion
	frames  []frameKey
	br      uint32
	chanOp  *chanOp // the channel operation it is in, if any
	// closing and closeSite are the channel it is closing, recorded
	// under the channel's lock.
	closing   uint64
	closeSite trace.SiteID
	cond      trace.ObjID  // the Cond it waits on, between Wait's entry and its Lock
	forkSite  trace.SiteID // the go statement (or WaitGroup.Go call) that started it
	onces     []onceOp     // the Once.Do calls it is in, innermost last
	test      testState    // the test it runs and the tests it started (testorder.go)
}

// onceOp is a call of Once.Do that has not been seen to return.
type onceOp struct {
	obj  trace.ObjID
	id   int64 // the Do frame's frameID and function entry
	fn   uint64
	site trace.SiteID
	ran  bool
}

type openRegion struct {
	id   int
	inst uint64
	cfa  int64
	fn   uint64
	end  int
	begs []int // the first lines of the regions it is made of
	last int   // the line its frame was at when last seen
	// lastTop says the frame was the innermost one then, not a caller
	// waiting for a call at that line to return.
	lastTop bool
	// intended says the region has evidence of intent: the events of a
	// goroutine belong to its outermost intended region.
	intended bool
}

type frameKey struct {
	cfa  int64
	fn   uint64
	file string
	line int
	// entry is the line of the function's entry, and name its name
	// without its package, for a function of the packages under test.
	entry   int
	name    string
	wrapper bool // a compiler-made wrapper, whose lines are not its own
}

type pendingFork struct {
	parent trace.GoID
	site   Line
	siteID trace.SiteID
	run    trace.ObjID // T.Run's object, for a test's goroutine (testorder.go)
}

func newRecorder(plan *Plan, tgt *proc.Target, progress func(int)) *recorder {
	t := &trace.Trace{Sites: []trace.Site{{}}, Objects: make(map[trace.ObjID]trace.Object)}
	return &recorder{
		plan: plan, tgt: tgt, progress: progress, t: t,
		v:     trace.NewValidator(t),
		sites: make(map[trace.Site]trace.SiteID),
		roles: make(map[uint64]bpRole),
		gs:    make(map[trace.GoID]*gstate),
		inst:  make(map[int]uint64),
		chans: make(map[uint64]*chanState),

		chanGen: make(map[uint64]uint64),
		onceGen: make(map[uint64]uint64),

		regionFns:  make(map[uint64][]int),
		entryLines: make(map[uint64]int),
		lay:        readLayout(tgt.BinInfo()),

		signalled:  make(map[trace.ObjID]bool),
		onceRan:    make(map[trace.ObjID]bool),
		onceRunner: make(map[trace.ObjID]trace.GoID),

		unprobed: slices.Clone(plan.Unprobed),
		reachAt:  make(map[uint64]string),
		reached:  make(map[string]bool),

		testAdded: make(map[trace.ObjID]bool),
	}
}

func (r *recorder) setBreakpoints() error {
	bi := r.tgt.BinInfo()
	r.regionFuncs()
	if file, lines := sourceLines(bi, "sync.(*WaitGroup).Go", "go func() {"); len(lines) > 0 {
		r.wgGoLine = Line{file, lines[0]}
	}
	for _, l := range r.plan.Lines() {
		addrs, err := proc.FindFileLocation(r.tgt, l.File, l.Line)
		if err != nil {
			// A line without code of its own, such as a declaration:
			// its accesses, if any, cannot be recorded.
			for _, p := range r.plan.Accesses[l] {
				r.unprobed = append(r.unprobed, Unprobed{Spot: Spot{l, p.Col}, Func: p.Func, Expr: p.Expr, Reason: ReasonUnsupported, Detail: "no instruction at its line"})
			}
			continue
		}
		_, isGo := r.plan.Gos[l]
		for _, a := range addrs {
			role := bpRole{line: l, lineBP: true, isGo: isGo}
			if isGo {
				// The literal of "go func() {...}()" starts on the go
				// statement's line; its entry is the child, not the fork.
				if fn := bi.PCToFunc(a); fn != nil {
					if _, fl, _ := bi.PCToLine(fn.Entry); fl == l.Line {
						role.isGo = false
					}
				}
			}
			if err := r.set(a, role); err != nil {
				return err
			}
		}
	}
	for _, name := range syncFuncs {
		addrs, err := proc.FindFunctionLocation(r.tgt, name, 0)
		if err != nil {
			continue // not linked into this program
		}
		for _, a := range addrs {
			if err := r.set(a, bpRole{syncFn: name}); err != nil {
				return err
			}
		}
	}
	for _, h := range slices.Concat(runtimeHooks, testOrderHooks) {
		var addrs []uint64
		var err error
		if h.line == "" {
			addrs, err = proc.FindFunctionLocation(r.tgt, h.fn, 0)
		} else {
			file, lines := sourceLines(bi, h.fn, h.line)
			if len(lines) == 0 {
				continue // the runtime's source is not where the binary says
			}
			// A line without code of its own (or not linked) is
			// skipped; the hook is set on the lines that have some.
			for _, line := range lines {
				if a, lerr := proc.FindFileLocation(r.tgt, file, line); lerr == nil {
					addrs = append(addrs, a...)
				}
			}
		}
		if err != nil {
			continue // not linked into this program
		}
		for _, a := range addrs {
			if err := r.set(a, bpRole{syncFn: h.fn, hook: h.hook}); err != nil {
				return err
			}
		}
	}
	return r.setReachBreakpoints()
}

func (r *recorder) set(addr uint64, role bpRole) error {
	if _, ok := r.roles[addr]; ok {
		return nil
	}
	if _, err := r.tgt.SetBreakpoint(len(r.roles)+1, addr, proc.UserBreakpoint, nil); err != nil {
		return fmt.Errorf("setting a breakpoint at %s:%d: %w", role.line.File, role.line.Line, err)
	}
	r.roles[addr] = role
	return nil
}

// stop turns the hit of every goroutine stopped at a breakpoint into
// events.
func (r *recorder) stop() {
	threads := r.tgt.ThreadList()
	sort.Slice(threads, func(i, j int) bool { return threads[i].ThreadID() < threads[j].ThreadID() })
	for _, th := range threads {
		bs := th.Breakpoint()
		if bs == nil || bs.Breakpoint == nil || !bs.Active {
			continue
		}
		role, ok := r.roles[bs.Addr]
		if !ok || r.reach(bs.Addr, role) {
			continue
		}
		r.hit(th, role)
		if r.invalid != "" {
			return
		}
	}
	if r.progress != nil && time.Since(r.lastProgress) > 200*time.Millisecond {
		r.lastProgress = time.Now()
		r.progress(len(r.t.Events))
	}
}

func (r *recorder) hit(th proc.Thread, role bpRole) {
	g, err := proc.GetG(th)
	if err != nil || g == nil || g.SystemStack {
		return
	}
	frames, err := proc.ThreadStacktrace(r.tgt, th, maxDepth)
	if err != nil || len(frames) == 0 {
		return
	}
	gid := trace.GoID(g.ID)
	switch role.hook {
	case hookNone:
	case hookTestFork, hookTestJoin, hookTestSignal, hookTestBarrier, hookTestResume, hookTestCleanup:
		r.testHook(g, frames, role.hook)
		return
	case hookOnceRun:
		if gs := r.gs[gid]; gs != nil && len(gs.onces) > 0 {
			o := &gs.onces[len(gs.onces)-1]
			o.ran = true
			r.onceRunner[o.obj] = gid
		}
		return
	default:
		r.chanHook(th, g, frames, role.hook)
		return
	}
	if role.syncFn != "" {
		// A sync method called by the sync package itself (RWMutex.Lock
		// locks a Mutex, Done calls Add) is part of the outer operation,
		// except the Locker's Unlock and Lock in Cond.Wait.
		if len(frames) > 1 && frames[1].Call.Fn != nil && frames[1].Call.Fn.PackageName() == "sync" && !inCondWait(frames) {
			if role.syncFn == "sync.(*WaitGroup).Done" && strings.HasPrefix(fnName(frames[1].Call.Fn), "sync.(*WaitGroup).Go.") {
				r.wgGoDone(th, g, frames)
			}
			return
		}
		if role.syncFn == "runtime.goexit1" {
			r.goexit(gid, g)
			return
		}
	}
	user := r.userFrame(frames)
	if user < 0 {
		return // the testing package's own locks and goroutines
	}
	gs := r.goroutine(gid, g)
	if gs == nil {
		return
	}
	r.catchUp(gs, frames, role, user)

	uf := frames[user].Call
	site := r.site(Line{uf.File, uf.Line}, 0, fnName(uf.Fn))
	if role.syncFn != "" {
		mem := th.ProcessMemory()
		scope := proc.FrameToScope(r.tgt, mem, g, th.ThreadID(), frames...)
		if strings.HasPrefix(role.syncFn, "runtime.") {
			r.chanEntry(gs, scope, mem, role.syncFn, site, Line{uf.File, uf.Line})
			return
		}
		r.syncOp(gs, scope, frames, role.syncFn, site, Line{uf.File, uf.Line})
		return
	}
	if user != 0 {
		return
	}
	r.probeHits++
	r.accesses(gs, th, g, frames, role.line)
	if role.isGo {
		r.forks = append(r.forks, pendingFork{parent: gid, site: role.line, siteID: r.site(role.line, 0, r.plan.Gos[role.line])})
	}
}

// openRegions begins the regions that the goroutine's frames, outermost
// first, are in and that are not open yet. A region begins at the first
// stop inside its lines rather than at a breakpoint of its own, which
// would record nothing else: no event of the goroutine can come between
// the two.
func (r *recorder) openRegions(gs *gstate, frames []proc.Stackframe, user int) {
	for i := len(frames) - 1; i >= user; i-- {
		f := frames[i]
		ids := r.regionFns[fnEntry(f)]
		for _, id := range ids {
			rp := r.plan.Regions[id-1]
			if f.Call.File != rp.Begin.File || f.Call.Line < rp.Begin.Line || f.Call.Line > rp.EndLine {
				continue
			}
			r.openRegion(gs, frames, i, rp)
		}
	}
}

func (r *recorder) openRegion(gs *gstate, frames []proc.Stackframe, i int, rp RegionProbe) {
	cfa, fn := frameID(frames, i), fnEntry(frames[i])
	for k := len(gs.regions) - 1; k >= 0; k-- {
		o := &gs.regions[k]
		if o.cfa != cfa || o.fn != fn || o.intended != rp.Intent.Confirms() {
			continue
		}
		if slices.Contains(o.begs, rp.Begin.Line) {
			return // open already
		}
		// Regions of one function overlap (a proximity region spans two
		// lock scopes); the trace's regions nest, so the open one absorbs
		// the new one: the outermost region is the intended one (SPEC,
		// "Intended atomic regions").
		o.end = max(o.end, rp.EndLine)
		o.begs = append(o.begs, rp.Begin.Line)
		return
	}
	r.inst[rp.ID]++
	inst := r.inst[rp.ID]
	line := frames[i].Call.Line
	gs.regions = append(gs.regions, openRegion{id: rp.ID, inst: inst, cfa: cfa, fn: fn, end: rp.EndLine, begs: []int{rp.Begin.Line}, last: line, lastTop: i == 0, intended: rp.Intent.Confirms()})
	e := trace.Event{Kind: trace.KindRegionBegin, Site: r.site(rp.Begin, rp.BeginCol, rp.Func), Region: trace.RegionID(rp.ID), Inst: inst}
	var at [2]trace.SiteID
	for k, s := range rp.Evidence {
		if s.File != "" {
			at[k] = r.site(s.Line, s.Col, rp.Func)
		}
	}
	e.SetIntent(rp.Intent, at[0], at[1])
	r.emit(gs, e)
}

// regionFuncs maps every region to the function it is in, by entry
// address, for openRegions. The function is the one with code at the
// region's first line that has code; a function literal that starts on
// that line is not it, unless it is the only one.
func (r *recorder) regionFuncs() {
	bi := r.tgt.BinInfo()
	for _, rp := range r.plan.Regions {
		var fns []*proc.Function
		for line := rp.Begin.Line; line <= rp.EndLine && len(fns) == 0; line++ {
			addrs, err := proc.FindFileLocation(r.tgt, rp.Begin.File, line)
			if err != nil {
				continue
			}
			for _, a := range addrs {
				if fn := bi.PCToFunc(a); fn != nil && !slices.Contains(fns, fn) {
					fns = append(fns, fn)
				}
			}
		}
		var outer []*proc.Function
		for _, fn := range fns {
			if _, l := bi.EntryLineForFunc(fn); l != rp.Begin.Line {
				outer = append(outer, fn)
			}
		}
		if len(outer) == 0 {
			outer = fns
		}
		for _, fn := range outer {
			r.regionFns[fn.Entry] = append(r.regionFns[fn.Entry], rp.ID)
		}
	}
	// A function's regions open outermost first at a stop inside
	// several: a proposal around confirmed regions
	// (regions.nestProposals) must be open before them to contain them.
	for _, ids := range r.regionFns {
		sort.SliceStable(ids, func(i, j int) bool {
			a, b := r.plan.Regions[ids[i]-1], r.plan.Regions[ids[j]-1]
			if a.Begin.Line != b.Begin.Line {
				return a.Begin.Line < b.Begin.Line
			}
			return a.EndLine > b.EndLine
		})
	}
}

// userFrame returns the index of the innermost frame in the packages under
// test, or -1.
func (r *recorder) userFrame(frames []proc.Stackframe) int {
	for i, f := range frames {
		if r.plan.Files[f.Call.File] {
			return i
		}
	}
	return -1
}

// catchUp records what goroutine gs did since its previous stop, up to
// the stop where its stack is frames.
func (r *recorder) catchUp(gs *gstate, frames []proc.Stackframe, role bpRole, user int) {
	r.flushPending(gs)
	r.flushAfter(gs, frames, user, user > 0 || role.syncFn != "")
	r.endOnces(gs, frames)
	r.countBranches(gs, frames)
	r.closeRegions(gs, frames, role)
	r.openRegions(gs, frames, user)
}

// afterWrite is a write made once the call of its line returned
// (aftercall.go), with the frameID of the line's frame, and the line.
type afterWrite struct {
	e     trace.Event
	depth int64
	line  Line
}

// flushAfter emits the writes of gs made once a call returned whose
// frame the goroutine is back in, or has left, at a stop in frames[at]
// (nil frames: every write). A stop in the sync package or the runtime
// called from the frame (call) at the write's own line is the line's
// call itself (the receive of "v = <-ch"), which the write follows.
func (r *recorder) flushAfter(gs *gstate, frames []proc.Stackframe, at int, call bool) {
	if len(gs.after) == 0 {
		return
	}
	var depth int64
	var line Line
	if frames != nil {
		depth = frameID(frames, at)
		line = Line{frames[at].Call.File, frames[at].Call.Line}
	}
	keep := gs.after[:0]
	for _, a := range gs.after {
		if frames == nil || a.depth > depth || a.depth == depth && !(call && a.line == line) || movedOn(frames, a) {
			r.emit(gs, a.e)
		} else {
			keep = append(keep, a)
		}
	}
	clear(gs.after[len(keep):])
	gs.after = keep
}

// movedOn says whether the frame of write a, still on the stack below
// the stop, has gone past the write's line: the stop is in a call made
// from a later line, or in a call deferred by the frame, which its
// return runs once the write is made (defer wg.Done(); v = f()).
func movedOn(frames []proc.Stackframe, a afterWrite) bool {
	for j := range frames {
		if frameID(frames, j) == a.depth {
			return Line{frames[j].Call.File, frames[j].Call.Line} != a.line
		}
	}
	return false
}

// maxDepth bounds the stack unwound at a stop.
const maxDepth = 64

// frameID identifies a frame across stops by its depth from the
// goroutine's first frame: the runtime moves stacks when it grows or
// shrinks them, which changes every frame's address. A stack deeper than
// maxDepth is not seen whole, and its frames go by address instead.
func frameID(frames []proc.Stackframe, i int) int64 {
	if len(frames) < maxDepth {
		return int64(len(frames) - i)
	}
	return frames[i].Regs.CFA
}

func fnEntry(f proc.Stackframe) uint64 {
	if f.Call.Fn == nil {
		return 0
	}
	return f.Call.Fn.Entry
}

// ofFunc returns the probes of a line that belong to the function a
// goroutine stopped in, fn (a runtime name). A line holds the accesses of
// several functions when a function literal is written on it
// (go func() { a = 1 }()): the goroutine that runs the line makes those
// of its own function, not the literal's. A probe whose function's name
// runtimeFuncName cannot map is kept.
func ofFunc(probes []AccessProbe, fn string) []AccessProbe {
	// The binary names a main package's functions "main.F", not by the
	// package's path, and escapes the dots of the last element of the
	// others' ("example.com/a.b.F" is "example.com/a%2eb.F"): a probe's
	// name is the package's path, then fn without its package.
	suffix := "." + withoutPackage(fn)
	keep := func(p AccessProbe) bool {
		rt, ok := runtimeFuncName(p.Func)
		return !ok || strings.HasSuffix(rt, suffix)
	}
	i := 0
	for i < len(probes) && keep(probes[i]) {
		i++
	}
	if i == len(probes) {
		return probes
	}
	own := slices.Clone(probes[:i])
	for _, p := range probes[i+1:] {
		if keep(p) {
			own = append(own, p)
		}
	}
	return own
}

// withoutPackage strips the package from a function's name in the binary:
// "example.com/p.(*T).M.func1" becomes "(*T).M.func1". (The binary escapes
// the dots of the path's last element, so the first dot after the last
// slash ends the package.)
func withoutPackage(name string) string {
	i := strings.LastIndexByte(name, '/') + 1
	if dot := strings.IndexByte(name[i:], '.'); dot >= 0 {
		return name[i+dot+1:]
	}
	return name
}

// runtimeFuncName turns the name of a function as the plan has it (its SSA
// name: "pkg/path.F$1$2", "(*pkg/path.T).M$1") into the name the compiler
// gives it in the binary ("pkg/path.F.func1.2", "pkg/path.(*T).M.func1").
// It reports false for a name it cannot map (generic, synthetic).
func runtimeFuncName(name string) (string, bool) {
	if name == "" || strings.ContainsAny(name, "[]") {
		return "", false
	}
	base, lits, _ := strings.Cut(name, "$")
	if strings.HasPrefix(base, "(") {
		recv, method, ok := strings.Cut(base[1:], ").")
		if !ok {
			return "", false
		}
		star := strings.HasPrefix(recv, "*")
		recv = strings.TrimPrefix(recv, "*")
		dot := strings.LastIndex(recv, ".")
		if dot < 0 {
			return "", false
		}
		if star {
			base = recv[:dot] + ".(*" + recv[dot+1:] + ")." + method
		} else {
			base = recv + "." + method
		}
	}
	if lits == "" {
		return base, true
	}
	parts := strings.Split(lits, "$")
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return "", false // $bound, $thunk and the like
		}
	}
	return base + ".func" + strings.Join(parts, "."), true
}

func fnName(fn *proc.Function) string {
	if fn == nil {
		return ""
	}
	return fn.Name
}

// goroutine returns the state of goroutine gid, creating it, with its
// fork, when it is first seen.
func (r *recorder) goroutine(gid trace.GoID, g *proc.G) *gstate {
	if gs := r.gs[gid]; gs != nil {
		if gs.ended {
			return nil
		}
		return gs
	}
	gs := &gstate{id: gid}
	r.gs[gid] = gs
	parent, site := rootG, trace.SiteID(0)
	goLoc := g.Go()
	for i, f := range r.forks {
		if f.site.File == goLoc.File && f.site.Line == goLoc.Line {
			if p := r.gs[f.parent]; p != nil && !p.ended {
				parent, site = f.parent, f.siteID
				r.forks = append(r.forks[:i:i], r.forks[i+1:]...)
				if f.run != 0 {
					r.testFork(gs, f)
				}
				break
			}
		}
	}
	if parent == rootG && !r.rootUp {
		r.rootUp = true
		r.gs[rootG] = &gstate{id: rootG}
	}
	gs.forkSite = site
	r.emit(r.gs[parent], trace.Event{Kind: trace.KindFork, Arg: uint64(gid), Site: site})
	return gs
}

// flushPending emits what gs did since its previous stop: the forks of
// the go statements it ran, and the acquires and waits that have returned.
func (r *recorder) flushPending(gs *gstate) {
	mine := false
	for _, f := range r.forks {
		if f.parent == gs.id {
			mine = true
		}
	}
	if mine {
		all, _, err := proc.GoroutinesInfo(r.tgt, 0, 0)
		if err == nil {
			sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
			for _, c := range all {
				if _, known := r.gs[trace.GoID(c.ID)]; known {
					continue
				}
				loc := c.Go()
				for _, f := range r.forks {
					if f.parent == gs.id && f.site.File == loc.File && f.site.Line == loc.Line {
						r.goroutine(trace.GoID(c.ID), c)
						break
					}
				}
			}
		}
	}
	for _, e := range gs.pending {
		switch e.Kind {
		case trace.KindAtomicLoad, trace.KindAtomicRMW:
			r.emitAtomic(gs, e)
		default:
			r.emit(gs, e)
		}
	}
	gs.pending = gs.pending[:0]
	r.endChanOp(gs)
}

// countBranches adds to gs.br the conditional branches between the
// goroutine's previous stop and this one, an approximation of AVFilter's
// br from the source: the plan's branch lines (Plan.Conds, and Plan.Calls,
// the calls that may branch on a value read) that the goroutine passed in
// the innermost frame both stops share, a loop's back edge there; in each
// frame of the previous stop below it, which has returned, those from the
// line it was at to the function's end, and its deferred calls; in each
// frame of this stop below it, which was entered, those from the
// function's start to the line it is at, and the calls in progress in the
// frames above. A call whose callee's frame is one of those counted (a
// function of the packages under test) is not counted itself: its lines
// are.
func (r *recorder) countBranches(gs *gstate, frames []proc.Stackframe) {
	cur := make([]frameKey, len(frames))
	for i, f := range frames {
		cur[i] = frameKey{cfa: frameID(frames, i), fn: fnEntry(f), file: f.Call.File, line: f.Call.Line}
		if r.plan.Files[f.Call.File] {
			cur[i].entry = r.entryLine(f.Call.Fn)
			cur[i].name = withoutPackage(fnName(f.Call.Fn))
			// The wrapper the compiler makes of a deferred call
			// ("F.deferwrap1") runs at F's return, at the defer
			// statement's line: F's lines are F's frame's to count.
			cur[i].wrapper = strings.Contains(cur[i].name, ".deferwrap")
		}
	}
	prev := gs.frames
	gs.frames = cur
	for ci, c := range cur {
		for pi, p := range prev {
			if p.cfa != c.cfa || p.fn != c.fn {
				continue
			}
			n := 0
			switch {
			case c.line < p.line:
				n++ // a loop's back edge
			case c.line > p.line:
				// The call the previous stop was in, if any, has returned.
				except := ""
				if pi > 0 {
					except = prev[pi-1].name
				}
				n += countLines(r.plan.Conds[c.file], p.line, c.line) +
					r.plan.callLine(c.file, p.line, except) +
					countLines(r.plan.Calls[c.file], p.line+1, c.line)
			}
			for _, q := range prev[:pi] {
				n += r.returnedBranches(q)
			}
			for k, e := range cur[:ci] {
				n += r.enteredBranches(e)
				caller := cur[k+1]
				n += r.plan.callLine(caller.file, caller.line, e.name)
			}
			gs.br = uint32(min(int64(gs.br)+int64(n), math.MaxUint32))
			return
		}
	}
}

// returnedBranches counts the branches a frame that has returned passed
// after the line it was at: the branch lines from there to its
// function's end, and its deferred calls that may branch on a value read,
// which run at the return wherever they are.
func (r *recorder) returnedBranches(q frameKey) int {
	fr, ok := r.plan.funcAt(q.file, q.line, q.entry)
	if !ok || q.wrapper {
		return 0
	}
	return r.plan.branchLines(q.file, q.line, fr.End+1) + countLines(r.plan.Defers[q.file], fr.Start, q.line)
}

// enteredBranches counts the branches a frame entered since the previous
// stop passed before the line it is at.
func (r *recorder) enteredBranches(e frameKey) int {
	fr, ok := r.plan.funcAt(e.file, e.line, e.entry)
	if !ok || e.wrapper {
		return 0
	}
	return r.plan.branchLines(e.file, fr.Start, e.line)
}

// entryLine returns the line of a function's entry in its file, or 0.
func (r *recorder) entryLine(fn *proc.Function) int {
	if fn == nil {
		return 0
	}
	if l, ok := r.entryLines[fn.Entry]; ok {
		return l
	}
	_, l := r.tgt.BinInfo().EntryLineForFunc(fn)
	r.entryLines[fn.Entry] = l
	return l
}

// closeRegions ends the goroutine's open regions whose frame has returned
// or moved past the region's last line.
func (r *recorder) closeRegions(gs *gstate, frames []proc.Stackframe, role bpRole) {
	keep := len(gs.regions)
	for k, o := range gs.regions {
		found := false
		for i, f := range frames {
			if frameID(frames, i) != o.cfa || fnEntry(f) != o.fn {
				continue
			}
			found = true
			l := f.Call.Line
			// A line breakpoint reached again in the region's own frame at
			// or before the last line seen there is a loop's next
			// iteration: a new instance, started anew if the line is a
			// first line of the region.
			back := l < o.last || l == o.last && !o.lastTop // back where a call was made: the call returned
			again := i == 0 && role.lineBP && f.Call.File == role.line.File &&
				(slices.Contains(o.begs, l) || back)
			if l < o.begs[0] || l > o.end || again {
				found = false
			}
			gs.regions[k].last, gs.regions[k].lastTop = l, i == 0
			break
		}
		if !found {
			keep = k
			break
		}
	}
	r.endRegions(gs, keep)
}

// endRegions ends the goroutine's open regions past the first keep,
// innermost first.
func (r *recorder) endRegions(gs *gstate, keep int) {
	for len(gs.regions) > keep {
		o := gs.regions[len(gs.regions)-1]
		gs.regions = gs.regions[:len(gs.regions)-1]
		r.emit(gs, trace.Event{Kind: trace.KindRegionEnd, Region: trace.RegionID(o.id), Inst: o.inst})
	}
}

var loadScalar = proc.LoadConfig{MaxStructFields: 0}

func (r *recorder) accesses(gs *gstate, th proc.Thread, g *proc.G, frames []proc.Stackframe, l Line) {
	probes := ofFunc(r.plan.Accesses[l], fnName(frames[0].Call.Fn))
	if len(probes) == 0 {
		return
	}
	scope := proc.FrameToScope(r.tgt, th.ProcessMemory(), g, th.ThreadID(), frames...)
	stackLo, stackHi := stackBounds(frames)
	// A line is recorded before it runs, so its reads come before its
	// writes (c.n += d reads c.n, then writes it).
	order := slices.Clone(probes)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].Write != order[j].Write {
			return !order[i].Write
		}
		return order[i].Col < order[j].Col
	})
	for _, p := range order {
		if p.Contents {
			if e, ok := r.contentsAccess(scope, l, p, p.Map, false); ok {
				r.emit(gs, e)
			} else {
				r.unevaluated++
			}
			continue
		}
		if p.Map != "" && p.Atomic == "" {
			if e, ok := r.mapElemAccess(scope, l, p); ok {
				if e.Kind != trace.KindInvalid {
					r.emit(gs, e)
				}
				r.contentsWrite(gs, scope, l, p)
				continue
			}
		}
		if p.Elems != "" {
			if !r.copyElems(gs, scope, l, p) {
				r.unevaluated++
			}
			continue
		}
		v, err := scope.EvalExpression(p.Expr, loadScalar)
		if err == nil && p.Atomic != "" && v.Kind == reflect.Pointer {
			v, err = scope.EvalExpression("*("+p.Expr+")", loadScalar)
		}
		if err != nil || v.Addr == 0 || v.Addr >= proc.FakeAddressBase {
			r.unevaluated++
			if p.Map != "" {
				r.contentsWrite(gs, scope, l, p)
			}
			continue
		}
		if stackLo <= v.Addr && v.Addr < stackHi {
			continue // the goroutine's own stack (stackBounds)
		}
		obj := trace.ObjID(v.Addr)
		if _, ok := r.t.Objects[obj]; !ok {
			r.t.Objects[obj] = trace.Object{Kind: trace.ObjVar, Name: p.Expr}
		}
		e := trace.Event{Kind: trace.KindRead, Obj: obj, Site: r.site(l, p.Col, p.Func)}
		if p.Atomic != "" {
			// An atomic store is a release, recorded before it happens; a
			// load or read-modify-write acquires, recorded after it
			// returned, at the goroutine's next stop.
			switch p.Atomic {
			case "Store":
				e.Kind = trace.KindAtomicStore
				r.emitAtomic(gs, e)
			case "Load":
				e.Kind = trace.KindAtomicLoad
				gs.pending = append(gs.pending, e)
			default:
				e.Kind = trace.KindAtomicRMW
				gs.pending = append(gs.pending, e)
			}
			continue
		}
		if p.Write {
			e.Kind = trace.KindWrite
			if p.AddrVaries {
				e.Flags |= trace.AddrVaries
			}
			if p.Const != nil {
				e.Value, e.Flags = *p.Const, e.Flags|trace.HasValue|trace.ValueConst
			}
		} else if val, ok := scalar(v); ok {
			e.Value, e.Flags = val, trace.HasValue
		} else if addr, size, ok := pointer(v); ok {
			e.Value, e.Arg, e.Flags = addr, size, trace.HasValue|trace.ValueIsAddr
		} else if n, ok := length(v); ok {
			e.Value, e.Flags = n, trace.HasValue|trace.ValueIsLen
		}
		if !p.Write && p.Guard != nil && e.Flags&trace.ValueIsAddr == 0 {
			r.guardedRead(&e, p.Guard, v, scope, th, g, frames)
		}
		if p.Rechecks {
			e.Flags |= trace.Rechecks
		}
		emit := func(e trace.Event) { r.emit(gs, e) }
		if p.AfterCall && len(frames) < maxDepth {
			// Made once the line's call returned (aftercall.go).
			depth := frameID(frames, 0)
			emit = func(e trace.Event) { gs.after = append(gs.after, afterWrite{e, depth, l}) }
		}
		emit(e)
		r.leafAccesses(e, v, p.Expr, emit)
		if p.Map != "" {
			r.contentsWrite(gs, scope, l, p)
		}
	}
}

// stackBounds returns the part of the stack of the goroutine whose
// frames these are that holds its variables: from its innermost frame's
// stack pointer to its outermost frame's canonical frame address; an
// empty range where that is not known. No other goroutine can reach a
// variable there (one whose address it could get is moved to the
// heap), and a goroutine's stack goes to the next goroutine when it
// ends, so that the variables of two goroutines' stacks can have one
// address and would be taken for one variable
// (testdata/record/stackvars). The instrumenting recorder's runtime
// skips the same addresses (avrt).
func stackBounds(frames []proc.Stackframe) (lo, hi uint64) {
	if len(frames) == 0 {
		return 0, 0
	}
	for _, f := range frames {
		if f.SystemStack {
			return 0, 0
		}
	}
	if lo = frames[0].Regs.SP(); lo == 0 {
		return 0, 0
	}
	return lo, uint64(frames[len(frames)-1].Regs.CFA)
}

// contentsWrite records, after the write of an element of a map, the
// write of the map's contents that len and range read (maps.go).
func (r *recorder) contentsWrite(gs *gstate, scope *proc.EvalScope, l Line, p AccessProbe) {
	if !p.Write || r.invalid != "" {
		return
	}
	if e, ok := r.contentsAccess(scope, l, p, p.Map, true); ok {
		r.emit(gs, e)
	}
}

// pointer returns the value of a pointer variable, the address it holds,
// and the size of what it points to (0 if not known), for
// trace.ValueIsAddr.
func pointer(v *proc.Variable) (addr, size uint64, ok bool) {
	if v.Unreadable != nil || v.Kind != reflect.Pointer || len(v.Children) != 1 || v.Children[0].Unreadable != nil {
		return 0, 0, false
	}
	c := &v.Children[0]
	if c.RealType != nil && c.RealType.Size() > 0 {
		size = uint64(c.RealType.Size())
	}
	return c.Addr, size, true
}

// length returns the length of a slice or string variable, for
// trace.ValueIsLen.
func length(v *proc.Variable) (uint64, bool) {
	if v.Unreadable != nil || v.Kind != reflect.Slice && v.Kind != reflect.String || v.Len < 0 {
		return 0, false
	}
	return uint64(v.Len), true
}

// scalar returns the value of an integer or boolean variable as the
// trace's Value.
func scalar(v *proc.Variable) (uint64, bool) {
	if v.Unreadable != nil || v.Value == nil {
		return 0, false
	}
	switch v.Kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := constant.Int64Val(v.Value)
		return uint64(n), ok
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return constant.Uint64Val(v.Value)
	case reflect.Bool:
		if constant.BoolVal(v.Value) {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// syncOp records a lock or WaitGroup operation at its method's entry.
// Releases and Done are recorded before they happen; acquires and Wait
// after they return, at the goroutine's next stop, so that the recorded
// order is one the program could have run.
func (r *recorder) syncOp(gs *gstate, scope *proc.EvalScope, frames []proc.Stackframe, name string, site trace.SiteID, at Line) {
	recv := "m"
	kind := trace.ObjMutex
	switch {
	case strings.HasPrefix(name, "sync.(*RWMutex)"):
		recv, kind = "rw", trace.ObjRWMutex
	case strings.HasPrefix(name, "sync.(*WaitGroup)"):
		recv, kind = "wg", trace.ObjWaitGroup
	case strings.HasPrefix(name, "sync.(*Cond)"):
		recv, kind = "c", trace.ObjCond
	case strings.HasPrefix(name, "sync.(*Once)"):
		recv, kind = "o", trace.ObjOnce
	}
	v, err := scope.EvalExpression("*"+recv, loadScalar)
	if err != nil || v.Addr == 0 {
		r.unevaluated++
		return
	}
	obj := trace.ObjID(v.Addr)
	if _, ok := r.t.Objects[obj]; !ok {
		label := r.plan.LockNames[at]
		if label == "" {
			label = fmt.Sprintf("%s@%s:%d", strings.TrimPrefix(kind.String(), "obj"), shortFile(at.File), at.Line)
		}
		r.t.Objects[obj] = trace.Object{Kind: kind, Name: label}
	}
	e := trace.Event{Obj: obj, Site: site}
	switch name {
	case "sync.(*Mutex).Lock", "sync.(*RWMutex).Lock", "sync.(*RWMutex).RLock":
		if gs.cond != 0 && inCondWait(frames) {
			// Cond.Wait relocks its Locker after it was woken.
			if r.signalled[gs.cond] {
				gs.pending = append(gs.pending, trace.Event{Kind: trace.KindCondWait, Obj: gs.cond, Site: site})
			}
			gs.cond = 0
		}
	}
	switch name {
	case "sync.(*Mutex).Lock", "sync.(*RWMutex).Lock":
		e.Kind = trace.KindAcquire
		gs.pending = append(gs.pending, e)
	case "sync.(*RWMutex).RLock":
		e.Kind = trace.KindRAcquire
		gs.pending = append(gs.pending, e)
	case "sync.(*Mutex).Unlock", "sync.(*RWMutex).Unlock":
		e.Kind = trace.KindRelease
		r.emit(gs, e)
	case "sync.(*RWMutex).RUnlock":
		e.Kind = trace.KindRRelease
		r.emit(gs, e)
	case "sync.(*WaitGroup).Add":
		d, err := scope.EvalExpression("delta", loadScalar)
		if err != nil {
			r.unevaluated++
			return
		}
		n, _ := scalar(d)
		e.Kind, e.Arg = trace.KindWGAdd, n
		r.emit(gs, e)
	case "sync.(*WaitGroup).Done":
		e.Kind = trace.KindWGDone
		r.emit(gs, e)
	case "sync.(*WaitGroup).Wait":
		e.Kind = trace.KindWGWait
		gs.pending = append(gs.pending, e)
	case "sync.(*WaitGroup).Go":
		// Go adds one and starts f in a goroutine of the sync package's
		// go statement, which is forked from here; its Done is recorded
		// by wgGoDone.
		e.Kind, e.Arg = trace.KindWGAdd, 1
		r.emit(gs, e)
		if r.wgGoLine.Line > 0 {
			r.forks = append(r.forks, pendingFork{parent: gs.id, site: r.wgGoLine, siteID: site})
		}
	case "sync.(*Cond).Wait":
		gs.cond = obj
	case "sync.(*Cond).Signal", "sync.(*Cond).Broadcast":
		e.Kind = trace.KindCondSignal
		if name == "sync.(*Cond).Broadcast" {
			e.Kind = trace.KindCondBroadcast
		}
		r.emit(gs, e)
		r.signalled[obj] = r.invalid == ""
	case "sync.(*Once).Do":
		// A Once that is not done, where one that is done was, is a new
		// one at a collected one's address: it gets an id of its own.
		id := obj | trace.ObjID(r.onceGen[uint64(obj)]<<48)
		if r.onceRan[id] {
			if d, err := scope.EvalExpression("o.done.v", loadScalar); err == nil {
				if done, ok := scalar(d); ok && done == 0 {
					r.onceGen[uint64(obj)]++
					id = obj | trace.ObjID(r.onceGen[uint64(obj)]<<48)
					r.t.Objects[id] = r.t.Objects[obj]
				}
			}
		}
		gs.onces = append(gs.onces, onceOp{obj: id, id: frameID(frames, 0), fn: fnEntry(frames[0]), site: site})
	}
}

// wgGoDone records the Done of a goroutine that WaitGroup.Go started, once
// its function has returned: a call from the sync package, but the one
// that ends the goroutine's part. Its site is the call of Go.
func (r *recorder) wgGoDone(th proc.Thread, g *proc.G, frames []proc.Stackframe) {
	gs := r.goroutine(trace.GoID(g.ID), g)
	if gs == nil {
		return
	}
	scope := proc.FrameToScope(r.tgt, th.ProcessMemory(), g, th.ThreadID(), frames...)
	v, err := scope.EvalExpression("*wg", loadScalar)
	if err != nil || v.Addr == 0 {
		r.unevaluated++
		return
	}
	r.flushPending(gs)
	r.flushAfter(gs, frames, 0, false)
	r.emit(gs, trace.Event{Kind: trace.KindWGDone, Obj: trace.ObjID(v.Addr), Site: gs.forkSite})
}

// inCondWait reports whether a sync method was called by Cond.Wait, for
// its Locker (directly, or through RWMutex.RLocker's methods).
func inCondWait(frames []proc.Stackframe) bool {
	for i := 1; i < len(frames) && i <= 2; i++ {
		switch fnName(frames[i].Call.Fn) {
		case "sync.(*Cond).Wait":
			return true
		case "sync.(*rlocker).Lock", "sync.(*rlocker).Unlock":
			continue
		}
		return false
	}
	return false
}

// endOnces records the Once.Do calls of gs that have returned: their
// frames are gone from its stack.
func (r *recorder) endOnces(gs *gstate, frames []proc.Stackframe) {
	for len(gs.onces) > 0 {
		o := gs.onces[len(gs.onces)-1]
		for i := range frames {
			if frameID(frames, i) == o.id && fnEntry(frames[i]) == o.fn {
				return // still in Do
			}
		}
		gs.onces = gs.onces[:len(gs.onces)-1]
		r.onceDo(gs, o)
	}
}

// onceDo records a Do that returned. One that did not run the function
// returned after the one that did, which is recorded first if it has not
// been seen to return yet; a Do whose runner is not recorded is not
// recorded either.
func (r *recorder) onceDo(gs *gstate, o onceOp) {
	if !o.ran && !r.onceRan[o.obj] {
		if rg := r.gs[r.onceRunner[o.obj]]; rg != nil && rg != gs && !rg.ended {
			for i, ro := range rg.onces {
				if ro.obj == o.obj && ro.ran {
					rg.onces = append(rg.onces[:i:i], rg.onces[i+1:]...)
					r.onceDo(rg, ro)
					break
				}
			}
		}
		if !r.onceRan[o.obj] {
			return
		}
	}
	e := trace.Event{Kind: trace.KindOnceDo, Obj: o.obj, Site: o.site}
	if o.ran {
		e.Arg = 1
	}
	r.emit(gs, e)
	if o.ran && r.invalid == "" {
		r.onceRan[o.obj] = true
	}
}

func shortFile(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// goexit ends a goroutine: its open regions close and its pending
// acquires, which have returned, are emitted first.
func (r *recorder) goexit(gid trace.GoID, g *proc.G) {
	gs := r.gs[gid]
	if gs == nil {
		// A goroutine of the plan's go statements that never reached a
		// probe: its pending fork is used up, so that a later child of the
		// same statement is not taken for it.
		loc := g.Go()
		for i, f := range r.forks {
			if f.site.File == loc.File && f.site.Line == loc.Line {
				r.forks = append(r.forks[:i:i], r.forks[i+1:]...)
				break
			}
		}
		return
	}
	if gs.ended {
		return
	}
	r.flushPending(gs)
	r.flushAfter(gs, nil, 0, false)
	for len(gs.onces) > 0 {
		o := gs.onces[len(gs.onces)-1]
		gs.onces = gs.onces[:len(gs.onces)-1]
		r.onceDo(gs, o)
	}
	r.endRegions(gs, 0)
	r.emit(gs, trace.Event{Kind: trace.KindEnd})
	gs.ended = true
}

// finish closes the regions still open when the run ended. Pending
// acquires are dropped: the program may have stopped before they
// returned.
func (r *recorder) finish() {
	ids := make([]trace.GoID, 0, len(r.gs))
	for id := range r.gs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		r.endRegions(r.gs[id], 0)
	}
}

// site returns the id of a source position, declaring it on first use.
func (r *recorder) site(l Line, col int, fn string) trace.SiteID {
	s := trace.Site{File: l.File, Line: l.Line, Col: col, Func: fn}
	if id, ok := r.sites[s]; ok {
		return id
	}
	id := trace.SiteID(len(r.t.Sites))
	r.t.Sites = append(r.t.Sites, s)
	r.sites[s] = id
	return id
}

// emit appends an event of gs, with the region it belongs to and the
// branches counted since its previous event, if it keeps the trace a
// possible execution. The first one that would not stops the recording.
func (r *recorder) emit(gs *gstate, e trace.Event) { r.emitIn(gs, e, true) }

// emitIn is emit, with the event outside every region unless inRegion.
func (r *recorder) emitIn(gs *gstate, e trace.Event, inRegion bool) {
	if r.invalid != "" {
		return
	}
	e.G = gs.id
	e.Seq = uint64(len(r.t.Events))
	if inRegion && e.Kind != trace.KindRegionBegin && e.Kind != trace.KindRegionEnd && len(gs.regions) > 0 {
		// The outermost open region is the intended one (SPEC: nested
		// regions count as their outermost), among those with evidence
		// of intent: a caller's proposal (c.Inc(); c.Get()) does not
		// take the accesses of the critical sections its calls run.
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
	if err := r.v.Step(e); err != nil {
		r.invalid = oneLine(err)
		return
	}
	r.t.Events = append(r.t.Events, e)
}
