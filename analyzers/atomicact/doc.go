// Package atomicact defines an Analyzer that reports check-then-act on
// sync/atomic values and variables accessed both atomically and plainly.
//
// # Analyzer atomicact
//
// atomicact: report atomic loads that decide a later atomic write, and mixed atomic and plain access
//
// Each sync/atomic operation is atomic; two of them are not. A load whose
// result decides a later Store, Add, Swap, And or Or of the same variable
// leaves a window in which another goroutine can change it:
//
//	if atomic.LoadInt32(&s.state) == idle {
//		atomic.StoreInt32(&s.state, running) // two goroutines can both start
//	}
//
// The fix is one CompareAndSwap (if !s.state.CompareAndSwap(idle, running)
// { return }), or a CompareAndSwap loop for a computed update. A write that
// a load in the same critical section of a mutex re-checks is not reported
// (the double-checked fast path of sync.Once), nor one that a load decides
// only by panicking when it finds the state changed: a best-effort misuse
// check (if s.state.Load() != want { panic("misuse") }) asserts, it does
// not decide the write. Nor is an Add that a load computes or decides
// where the writes that loads decide take turns: a flow-control window
// (n := min(s.window.Load(), len(b)), then s.window.Add(-n)) whose
// takers all hold one lock, which the load and the Add hold in one
// critical section (or their function runs with, as its callers hold
// it), while every other write of the variable is an Add that no load
// decides (the reader of window updates adds what it is told): an Add
// made in between is kept. A Store, Swap or CompareAndSwap that no load
// decides, or one made without the lock, keeps the load reported.
//
// A load that a Store of the same variable follows on every path, the
// load deciding or computing nothing of it, loses the Adds of the
// variable that other goroutines make in between, when the package adds
// to it atomically: neither the load saw them nor does the Store keep
// them.
//
//	n := atomic.LoadInt64(&m.uncounted) // reported: use Swap
//	atomic.AddInt64(&m.count, n)
//	atomic.StoreInt64(&m.uncounted, 0)
//
// One Swap takes and clears at once. The load and the Store may be made
// through methods of the variable's own type that do nothing else
// (c.Value(), then c.Reset()); not through a call that makes other
// accesses too, which runs a protocol of its own. A load and a Store in
// one critical section of a lock that every Add holds are not reported.
//
// The analyzer also reports a struct field or package-level variable that
// is accessed through sync/atomic functions in one place and plainly in
// another: the plain access races with the atomic ones. Prefer the types
// of sync/atomic (atomic.Int64, atomic.Pointer), which cannot be accessed
// plainly. A struct value that holds such a field, read or written
// plainly as a whole (return c.stats, against atomic.AddUint64(
// &c.stats.Writes, 1)), accesses that field plainly too, and is reported;
// the atomic state inside a sync.Mutex, WaitGroup or Once that the struct
// holds is the synchronisation's own, not the struct's data.
// A function without a body that //go:linkname links to
// sync/atomic, or to the runtime's atomics
// (internal/runtime/atomic.LoadAcquintptr), is an atomic operation too. A
// plain read made with a lock held is not reported, nor are accesses to a
// value that is still being built in the function that allocated it:
// before it escapes to another goroutine (passed to a go statement,
// sent on a channel, stored into shared state, or given to a function
// that does one of these); nor those of a builder method, one that
// returns its receiver to be chained and takes no lock
// (NewCounter().WithResolution(20)), which by that convention sets its
// value up before it is shared, as a constructor does.
//
// Nor is a plain read that follows, on every path through its function,
// an atomic load of a sibling field of the same value, when some function
// of the package stores the read field atomically and then stores that
// sibling atomically: the writer publishes the field through the sibling
// (message passing), and the load-acquire orders the read after the
// store it publishes.
//
//	atomic.StorePointer(&t.local, p) // publish the array,
//	atomic.StoreUintptr(&t.size, n)  // then its size
//	...
//	n := atomic.LoadUintptr(&t.size) // acquire the size,
//	l := t.local                     // then read the array: not reported
//
// A store made later can still run with such a read; code written so (a
// load-consume after a load-acquire) accepts the newer value.
//
// A plain write made with a lock held for writing that every atomic
// access of the variable holds, even only for reading, is not reported:
// the write lock of an RWMutex excludes its readers, so the write is
// ordered with each atomic access (a breaker's readers test and swap
// its time atomically under RLock, and the one that opens it sets the
// time under Lock).
//
// A load and a store made in one critical section of a lock that every
// atomic write of the variable holds are one step, also where the
// function runs with the lock its callers hold (an unexported helper
// every call of which holds it, as guardedby infers).
//
// A field accessed atomically only in the instances that one unexported
// pointer field points to (m.snapshot.count), whose values the package
// uses only to reach their fields, is not reported where it is read
// plainly through another pointer: a copy handed out (the snapshot's own
// methods on a copy).
//
// Nor is a plain access of a field of a struct held by value in another
// field, or in a variable, than every atomic access of it: those are
// other instances. A report that embeds a copy of a cache's counters
// (type Report struct{ Counters }) is not the cache's counters (type
// cache struct{ counters Counters }), so r.Gets += c.counters.Gets.Load()
// is not reported; an access through a pointer to the counters can be of
// either, and is.
//
// A load whose value only says how much a later Add takes away (n :=
// x.Load(); x.Add(-n), draining a counter) is not reported: an Add in
// between is kept. Nor is a plain read that every path reaches through
// a WaitGroup's or an errgroup's Wait (the atomic updates are taken to be
// the waited-for goroutines').
//
// Neither kind is reported where nothing can interleave yet: in an init
// function, in a function given TestMain's *testing.M before it calls
// m.Run, or in a test or benchmark of a _test.go file before it calls
// t.Parallel (go test runs it alone), and before that function starts a
// goroutine that can reach the state (regions.Startup). Nor is a plain
// access in a function that a //go:linkname directive names: another
// package, in practice the runtime, calls it by name in a context its
// package does not show (sync.Pool's cleanup runs with the world
// stopped).
package atomicact
