// Package avrt is the recording runtime of avcheck's instrumenting
// recorder. The recorder rewrites the packages under test so that each
// probe of its plan calls one of this package's functions, and builds the
// test or program with this package beside them (as the module
// avcheck.invalid/avrt, added through an overlaid go.mod; see
// dynamic/record/instrument.go). It imports the standard library only,
// and is written in the language of Go 1.18 (its module's go line,
// rtGoVersion in instrument.go), so that the module of the code under
// test, whose go line must be as recent as its dependencies', need not be
// made newer: that would change the meaning of its code (the loop
// variables of Go 1.22).
//
// A probe appends one fixed-size event to the buffer of the P its
// goroutine runs on, pinned to that P for the append (as sync.Pool is), so
// the hot path takes no lock; a global atomic counter orders the events
// of all buffers. The buffers are chunks of a file mapped into memory
// (MAP_SHARED): an event is in the file's pages the moment it is written,
// so the trace survives every way a process can end, os.Exit, a panic, a
// fatal signal, SIGKILL, without a flush. A chunk holds the events of one
// buffer in the order of their sequence numbers, and a chunk's unused
// slots are zero, which ends it. The recorder (dynamic/record) merges the
// chunks by sequence number into a trace.
//
// Recording is on when the environment variable AVCHECK_RECORD names the
// file to write; otherwise every probe returns at once. The variable is
// removed from the environment when recording starts, so that a copy of
// the program that it starts does not record into the same file.
//
// A goroutine is identified by the runtime's goroutine id, read from the
// goroutine's g at an offset found at start-up (goid.go); the go
// statements of the packages under test tell their children their parent
// with a token (Fork, Start).
package avrt

import (
	"errors"
	"os"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Kind is the operation of a raw event. The recorder's converter
// (dynamic/record/convert.go) turns raw events into trace events.
type Kind uint8

// The raw event kinds. Their values are the file format: append only.
const (
	KindNone          Kind = iota
	KindRead               // Obj read
	KindReadValue          // Obj read; Arg is the value read
	KindWrite              // Obj written
	KindAcquire            // Lock of Obj returned
	KindRelease            // Unlock of Obj, before it
	KindRAcquire           // RLock of Obj returned
	KindRRelease           // RUnlock of Obj, before it
	KindFork               // a go statement; Arg is the child's token
	KindStart              // the goroutine with token Arg starts
	KindEnd                // the goroutine returns
	KindSend               // send on channel Obj, before it; Arg is its capacity
	KindRecv               // receive from channel Obj returned; Arg is its capacity
	KindRangeEnd           // a range over channel Obj ended (closed, or left by a break); Arg is its capacity
	KindClose              // close of channel Obj, before it; Arg is its capacity
	KindWGAdd              // WaitGroup.Add of Obj; Arg is the delta
	KindWGDone             // WaitGroup.Done of Obj, before it
	KindWGWait             // WaitGroup.Wait of Obj returned
	KindCondWait           // Cond.Wait of Obj returned
	KindCondSignal         // Cond.Signal of Obj, before it
	KindCondBroadcast      // Cond.Broadcast of Obj, before it
	KindOnce               // Once.Do of Obj returned; Arg is 1 if it ran the function
	KindAtomicLoad         // atomic load of Obj returned
	KindAtomicStore        // atomic store of Obj, before it
	KindAtomicRMW          // atomic read-modify-write of Obj returned
	KindBegin              // region Arg begins
	KindFinish             // region Arg ends
	KindMapRead            // read of a map element; Obj names the map and key, Arg is the map
	KindMapWrite           // write of a map element; Obj names the map and key, Arg is the map
	KindContents           // read of a map's contents (len, range); Obj is the map
	KindBranch             // a conditional branch, or a call that may branch on a value read; Arg more right after it
	KindParam              // Arg is the value of a parameter that the next read's guard compares with
	KindTestBegin          // a top-level test that runs alone (no t.Parallel) begins
	KindTestEnd            // that test returns
	KindTestFork           // t.Run starts a subtest; Arg is its token (Sub)
	KindTestJoin           // that t.Run returned
	KindTestParallel       // the test calls t.Parallel, which signals its parent
	KindTestResume         // t.Parallel returned: the test's parent has returned
	KindTestReturn         // a subtest's function returned
	KindSent               // a send of a select's case, after it (at the start of the case's body)
	KindReadAddr           // Obj read; Arg is the address it holds (a pointer)
	KindReadLen            // Obj read; Arg is the length of what it holds (a slice or string)
	KindMakeChan           // make of channel Obj returned; Arg is its capacity
	KindRunTests           // TestMain calls m.Run, which starts the tests
	KindRanTests           // that m.Run returned: the tests have returned
	KindMade               // an allocation returned the object at Obj; Arg is its size in bytes
	KindTestGo             // a goroutine the testing package started runs a test or benchmark that TestBegin does not record
	KindPoolPut            // a sync.Pool's Put of the item whose interface data word is Obj, before it
	KindPoolGet            // a sync.Pool's Get returned the item whose interface data word is Obj
	KindTestCleanup        // a test's cleanups begin: its function returned and its parallel subtests ended
	KindTestDone           // a test's cleanups ended: its parent, or the next test, goes on
)

// Event is one raw event, as it lies in the file (little-endian, on the
// machines the recorder runs on). Seq 0 marks an unused slot.
type Event struct {
	Seq  uint64
	G    uint64
	Obj  uint64
	Arg  uint64
	Site uint32
	Kind Kind
	_    [3]byte
}

// EventSize is the size of an Event in the file.
const EventSize = int(unsafe.Sizeof(Event{}))

// ChunkEvents is the number of events in a chunk; ChunkBytes, a chunk's
// size, is a multiple of every page size the recorder runs with.
const (
	ChunkEvents = 16384
	ChunkBytes  = ChunkEvents * EventSize
)

// HeaderBytes is the size of the file's header, which holds Magic; the
// chunks follow it.
const HeaderBytes = 64 << 10

// EnteredOffset is where, in the file's header, the runtime marks the
// functions the run entered (Enter): a table of 32-bit slots, each 0 or
// the id of a function entered. MaxEntered is the number of slots.
const (
	EnteredOffset = 4 << 10
	MaxEntered    = (HeaderBytes - EnteredOffset) / 4
)

// CutOffset is where, in the file's header, the runtime writes the
// sequence number of the last event it recorded when it stopped
// recording before the program ended (a uint64 in the machine's byte
// order; 0 if it did not), and at CutOffset+8 why (CutLimit or
// CutDiskFull). Events with a later sequence number that lie in the
// file, written into chunks mapped before, are not part of the trace.
const CutOffset = 64

// Why the recording stopped early.
const (
	CutLimit    = 1 // the file reached the number of events EnvLimit allows
	CutDiskFull = 2 // the file could not grow
)

// EnvLimit is the environment variable that bounds the number of events
// recorded (decimal); past it, the runtime records nothing more.
const EnvLimit = "AVCHECK_RECORD_LIMIT"

// Magic starts the file, with the event size after it.
const Magic = "avcheck raw events 1\n"

// Header returns the header of a file of no event: Magic, the event
// size, and the rest zero (no cut, no function entered).
func Header() []byte {
	head := make([]byte, HeaderBytes)
	head[copy(head, Magic)] = byte(EventSize)
	return head
}

// EnvFile is the environment variable that names the file to record to.
const EnvFile = "AVCHECK_RECORD"

// The runtime's state is package-level: the rewritten code calls plain
// functions from anywhere in the program, and a program has one
// recording. It is set once, by init, before any probe runs.
var (
	enabled bool
	seq     atomic.Uint64
	tokens  atomic.Uint64
	// shards are the buffers of the Ps, indexed by the P's id; overflow
	// is the buffer of the rare goroutine whose P is not among them
	// (GOMAXPROCS raised after start-up), under slow.
	shards   []shard
	overflow shard
	// slow serialises the allocation of chunks and the overflow buffer.
	slow sync.Mutex
	out  *mapping
	// entered are the header's slots that Enter marks.
	entered []uint32
	// stopped says the recording stopped early (CutOffset).
	stopped atomic.Bool
	// spare is a chunk mapped but not in use yet, under slow.
	spare []Event
)

type shard struct {
	buf []Event
	n   int
	_   [64 - 32]byte // one cache line per shard
}

// copyPath is the import path of the copy of this package that the
// instrumenting recorder builds into the program (rtModule in
// dynamic/record): only that copy records. A program that links this
// package under its own path too (avcheck's own tests, recorded by
// avcheck) would otherwise have two runtimes writing one file.
const copyPath = "avcheck.invalid/avrt"

func init() {
	if reflect.TypeOf(shard{}).PkgPath() != copyPath {
		return
	}
	if name := os.Getenv(EnvFile); name != "" {
		// The recording is this process's: a program that starts
		// copies of itself (a test of a server, of a command) would
		// have them reopen the file, truncated under this process's
		// mapping.
		os.Unsetenv(EnvFile)
		if err := start(name); err != nil {
			os.Stderr.WriteString("avcheck: recording disabled: " + err.Error() + "\n")
		}
	}
}

// start begins recording to the file name.
func start(name string) error {
	m, err := openMapping(name)
	if err != nil {
		return err
	}
	if entered, err = m.entered(); err != nil {
		return err
	}
	if v := os.Getenv(EnvLimit); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return errors.New("bad " + EnvLimit + " " + strconv.Quote(v))
		}
		// The limit counts events; the file holds, besides, the
		// unfilled rest of each P's chunk.
		m.maxEvents = uint64(n)
		m.max = int64(HeaderBytes) + ((n+ChunkEvents-1)/ChunkEvents+int64(maxProcs())+1)*int64(ChunkBytes)
	}
	out = m
	calibrate()
	shards = make([]shard, maxProcs())
	enabled = true
	return nil
}

// emit records one event of the calling goroutine.
func emit(kind Kind, obj, arg uint64, site uint32) {
	if stopped.Load() {
		// The recording has stopped at its limit: the events the Ps'
		// chunks could still hold are past the cut, which the
		// converter drops, so for the rest of a long run a probe
		// costs this load.
		return
	}
	g := goid()
	pid := procPin()
	if pid < len(shards) {
		sh := &shards[pid]
		if kind == KindBranch && sh.n > 0 {
			// A branch right after the goroutine's own branch, with no
			// event anywhere between, adds to its count (Arg): a loop
			// that polls, with no access to record, would otherwise
			// spend -max-events on branches alone (3M of them, and 787
			// events of the trace, on one scheduler's test).
			if last := &sh.buf[sh.n-1]; last.Kind == KindBranch && last.G == g && last.Seq == seq.Load() {
				last.Arg++
				procUnpin()
				return
			}
		}
		if sh.n < len(sh.buf) {
			sh.buf[sh.n] = Event{Seq: seq.Add(1), G: g, Obj: obj, Arg: arg, Site: site, Kind: kind}
			sh.n++
			procUnpin()
			return
		}
	}
	procUnpin()
	emitSlow(g, kind, obj, arg, site)
}

// emitSlow records an event whose buffer is full or missing: a new chunk
// is mapped, without the pin (mapping is a system call), and installed
// with it.
func emitSlow(g uint64, kind Kind, obj, arg uint64, site uint32) {
	if stopped.Load() {
		return
	}
	slow.Lock()
	defer slow.Unlock()
	fresh := spare
	spare = nil
	if fresh == nil {
		var why byte
		if fresh, why = out.chunk(); why != 0 {
			// The trace ends here: the events other goroutines write
			// into the chunks they hold are past the cut.
			if !stopped.Load() {
				stopped.Store(true)
				out.cut(seq.Load(), why)
			}
			return
		}
	}
	var old []Event
	pid := procPin()
	sh := &overflow
	if pid < len(shards) {
		sh = &shards[pid]
	}
	if sh.n >= len(sh.buf) {
		old = sh.buf
		sh.buf, sh.n = fresh, 0
		fresh = nil
	}
	sh.buf[sh.n] = Event{Seq: seq.Add(1), G: g, Obj: obj, Arg: arg, Site: site, Kind: kind}
	sh.n++
	procUnpin()
	// No goroutine writes a full chunk, and every other writer of this
	// shard runs pinned to its P: the old chunk is no one's now. A fresh
	// chunk not needed (the goroutine moved to a P whose buffer has
	// room) is kept for the next full buffer: the file holds no empty
	// chunks.
	out.release(old)
	spare = fresh
}

func ptr[T any](p *T) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }

// recorded reports whether an access of, or an allocation at, p is
// recorded: while recording, unless p is in the calling goroutine's own
// stack (private).
func recorded(p unsafe.Pointer) bool { return enabled && !private(p) }

// Read records a read of *p.
func Read[T any](p *T, site uint32) {
	if recorded(unsafe.Pointer(p)) {
		emit(KindRead, ptr(p), 0, site)
	}
}

// Integer is the types whose values a read records.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// ReadInt records a read of *p with the value it holds.
func ReadInt[T Integer](p *T, site uint32) {
	if recorded(unsafe.Pointer(p)) {
		emit(KindReadValue, ptr(p), uint64(*p), site)
	}
}

// ReadBool records a read of *p with the value it holds.
func ReadBool[T ~bool](p *T, site uint32) {
	if recorded(unsafe.Pointer(p)) {
		var v uint64
		if *p {
			v = 1
		}
		emit(KindReadValue, ptr(p), v, site)
	}
}

// ReadPtr records a read of the pointer *p with the address it holds.
func ReadPtr[P ~*E, E any](p *P, site uint32) {
	if recorded(unsafe.Pointer(p)) {
		emit(KindReadAddr, ptr(p), uint64(uintptr(unsafe.Pointer(*p))), site)
	}
}

// ReadSliceLen records a read of the slice *p with its length.
func ReadSliceLen[S ~[]E, E any](p *S, site uint32) {
	if recorded(unsafe.Pointer(p)) {
		emit(KindReadLen, ptr(p), uint64(len(*p)), site)
	}
}

// ReadStringLen records a read of the string *p with its length.
func ReadStringLen[S ~string](p *S, site uint32) {
	if recorded(unsafe.Pointer(p)) {
		emit(KindReadLen, ptr(p), uint64(len(*p)), site)
	}
}

// The functions below record a read as the functions above do, and
// return p: a read that no statement can be probed before (in a case of
// a switch, say) is probed where the program evaluates it, as
// (*ReadIntAt(&x, site)).

// ReadAt is Read, returning p.
func ReadAt[T any](p *T, site uint32) *T {
	Read(p, site)
	return p
}

// ReadIntAt is ReadInt, returning p.
func ReadIntAt[T Integer](p *T, site uint32) *T {
	ReadInt(p, site)
	return p
}

// ReadBoolAt is ReadBool, returning p.
func ReadBoolAt[T ~bool](p *T, site uint32) *T {
	ReadBool(p, site)
	return p
}

// ReadPtrAt is ReadPtr, returning p.
func ReadPtrAt[P ~*E, E any](p *P, site uint32) *P {
	ReadPtr(p, site)
	return p
}

// ReadSliceLenAt is ReadSliceLen, returning p.
func ReadSliceLenAt[S ~[]E, E any](p *S, site uint32) *S {
	ReadSliceLen(p, site)
	return p
}

// ReadStringLenAt is ReadStringLen, returning p.
func ReadStringLenAt[S ~string](p *S, site uint32) *S {
	ReadStringLen(p, site)
	return p
}

// Write records a write of *p, before it.
func Write[T any](p *T, site uint32) {
	if recorded(unsafe.Pointer(p)) {
		emit(KindWrite, ptr(p), 0, site)
	}
}

// MaxElems is the number of elements a copy's probe records at most
// (dynamic/record/copies.go says why).
const MaxElems = 16

// ReadElems records the reads of copy(dst, src) from src: of its first n
// elements, n the smaller of the two lengths, the first MaxElems.
func ReadElems[E any](src, dst []E, site uint32) { elems(KindRead, src, len(dst), site) }

// WriteElems records the writes of copy(dst, src) to dst, before them: of
// its first n elements, n the smaller of the two lengths, the first
// MaxElems.
func WriteElems[E any](dst, src []E, site uint32) { elems(KindWrite, dst, len(src), site) }

// WriteElemsString is WriteElems for a copy from a string.
func WriteElemsString[S ~string](dst []byte, src S, site uint32) {
	elems(KindWrite, dst, len(src), site)
}

func elems[E any](kind Kind, s []E, other int, site uint32) {
	n := len(s)
	if other < n {
		n = other
	}
	if n > MaxElems {
		n = MaxElems
	}
	if !enabled || n == 0 || unsafe.Sizeof(s[0]) == 0 || private(unsafe.Pointer(&s[0])) {
		return
	}
	for i := 0; i < n; i++ {
		emit(kind, ptr(&s[i]), 0, site)
	}
}

// Enter records that the function with the given id (not 0) was
// entered: one of the functions with accesses the recorder does not
// probe, so that it can say which of those the run reached. It records
// no event: the id goes into a slot of the header's table, an open
// addressing hash table from id%MaxEntered on, unless it is there
// already.
func Enter(id uint32) {
	if !enabled || len(entered) != MaxEntered || id == 0 {
		return
	}
	for i, n := id%MaxEntered, 0; n < MaxEntered; i, n = (i+1)%MaxEntered, n+1 {
		v := atomic.LoadUint32(&entered[i])
		if v == 0 {
			if atomic.CompareAndSwapUint32(&entered[i], 0, id) {
				return
			}
			v = atomic.LoadUint32(&entered[i])
		}
		if v == id {
			return
		}
	}
}

// TestBegin records that a top-level test of the package under test
// begins, one that does not call t.Parallel: the testing package runs
// such tests one after another, an order made by its own
// synchronisation, which is not recorded. The test calls TestEnd,
// deferred, when it returns.
func TestBegin(site uint32) {
	if enabled {
		emit(KindTestBegin, 0, 0, site)
	}
}

// TestGo records that the calling goroutine, which the testing package
// started, runs a top-level test that calls t.Parallel, or a benchmark:
// its first event, which tells it from a goroutine that other code not
// rewritten started.
func TestGo(site uint32) {
	if enabled {
		emit(KindTestGo, 0, 0, site)
	}
}

// TestEnd records that a top-level test or example returns. For a test
// (t not nil), it has the testing package record, when it runs the
// test's cleanups, that they begin: registered last, that cleanup runs
// first, once the test's parallel subtests ended. An example has no
// cleanups: its end is their end too.
func TestEnd(t Cleaner, site uint32) {
	if !enabled {
		return
	}
	emit(KindTestEnd, 0, 0, site)
	if t == nil {
		emit(KindTestDone, 0, 0, site)
		return
	}
	t.Cleanup(func() { emit(KindTestCleanup, 0, 0, site) })
}

// Cleaner is a test's T or B, whose Cleanup the testing package runs,
// in the test's goroutine, once the test's function returned and its
// parallel subtests ended, before the test signals its parent.
type Cleaner interface{ Cleanup(func()) }

// TestCleanups, called as a test's function begins, has the testing
// package record that the test's cleanups ended: registered first, that
// cleanup runs last. What the cleanups did, such as restoring a setting
// the test changed, happens before the next test or the parent goes on.
func TestCleanups(t Cleaner, site uint32) {
	if enabled {
		t.Cleanup(func() { emit(KindTestDone, 0, 0, site) })
	}
}

// RunTests calls m.Run for a TestMain, whose rewritten call of m.Run
// comes here, and records the call and its return: the tests that m.Run
// starts happen after what TestMain did before, and TestMain goes on
// after them, an order made by the testing package, which is not
// recorded. Its type parameter keeps this package free of the testing
// package.
func RunTests[M interface{ Run() int }](m M, site uint32) int {
	if !enabled {
		return m.Run()
	}
	emit(KindRunTests, 0, 0, site)
	code := m.Run()
	emit(KindRanTests, 0, 0, site)
	return code
}

// Sub wraps the function of a subtest that a test starts with t.Run:
// the testing package runs it in a goroutine of its own, which its
// parent waits for, an order made by its own synchronisation, which is
// not recorded. Sub records the start in the parent (before t.Run is
// called), and the function records its own start and return; the
// rewritten code passes t.Run's result through Ran, which records that
// the parent goes on. Its type parameter keeps this package free of the
// testing package.
func Sub[T any](f func(T), site uint32) func(T) {
	if !enabled {
		return f
	}
	t := tokens.Add(1)
	emit(KindTestFork, 0, t, site)
	return func(x T) {
		emit(KindStart, 0, t, site)
		c, _ := any(x).(Cleaner)
		if c != nil {
			TestCleanups(c, site)
		}
		defer func() {
			emit(KindTestReturn, 0, 0, site)
			if c != nil {
				c.Cleanup(func() { emit(KindTestCleanup, 0, 0, site) })
			}
		}()
		f(x)
	}
}

// Ran records that a t.Run call whose function Sub wrapped returned, and
// returns its result.
func Ran(ok bool, site uint32) bool {
	if enabled {
		emit(KindTestJoin, 0, 0, site)
	}
	return ok
}

// TestParallel records that a test calls t.Parallel, and TestResume
// that the call returned.
func TestParallel(site uint32) {
	if enabled {
		emit(KindTestParallel, 0, 0, site)
	}
}

// TestResume: see TestParallel.
func TestResume(site uint32) {
	if enabled {
		emit(KindTestResume, 0, 0, site)
	}
}

// Begin records that region id begins.
func Begin(id, site uint32) {
	if enabled {
		emit(KindBegin, 0, uint64(id), site)
	}
}

// Finish records that region id ends.
func Finish(id uint32) {
	if enabled {
		emit(KindFinish, 0, uint64(id), 0)
	}
}

// Try runs a probe whose address may not be valid where it is evaluated
// (p.n in p != nil && p.n > 0, probed before the statement): a panic of
// the probe is the program's business only if the program makes it, so
// it is recovered, and nothing recorded.
func Try(probe func()) {
	if !enabled {
		return
	}
	defer func() { _ = recover() }()
	probe()
}

// Branch records that the goroutine passes a conditional branch.
func Branch() {
	if enabled {
		emit(KindBranch, 0, 0, 0)
	}
}

// Cond records that the goroutine passes a conditional branch once its
// condition b is evaluated, and returns b: an if statement's condition
// that reads (or calls what reads) is decided by those reads, so the
// branch comes after them.
func Cond(b bool) bool {
	if enabled {
		emit(KindBranch, 0, 0, 0)
	}
	return b
}

// Param records the value of a parameter that the guard of the next read
// compares the value read with.
func Param(v int64) {
	if enabled {
		emit(KindParam, 0, uint64(v), 0)
	}
}

// Fork records a go statement, before it, and returns the token its
// child passes to Start.
func Fork(site uint32) uint64 {
	if !enabled {
		return 0
	}
	t := tokens.Add(1)
	emit(KindFork, 0, t, site)
	return t
}

// Start records that the goroutine a go statement forked with token t
// starts. The goroutine calls End, deferred, when it returns.
func Start(t uint64) {
	if enabled {
		emit(KindStart, 0, t, 0)
	}
}

// End records that the calling goroutine returns.
func End() {
	if enabled {
		emit(KindEnd, 0, 0, 0)
	}
}
