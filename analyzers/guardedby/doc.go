// Package guardedby defines an Analyzer that reports accesses to a field
// or variable without the mutex that guards it.
//
// # Analyzer guardedby
//
// guardedby: report accesses without the lock that guards a field
//
// The guard of a struct field is the sibling sync.Mutex or sync.RWMutex
// field named by a //avcheck:guardedby annotation on the field, or else
// the one held at most of the field's accesses in its package: at least
// -threshold of them (0.65 by default) and at least two. An access is a
// source position: c.n++ counts once. Likewise for a package-level
// variable and a package-level mutex.
//
// A lock held at none of a field's writes is not inferred as its guard,
// however many of its reads hold it, when the field is written nowhere
// but where its value is built (once shared, it is only read), or when
// the field is exported and the lock is not: the package's users, who
// cannot take the lock, set such a field before they share the value
// (configuration, such as an option func(*T) that sets t.Timeout). The
// readers hold the lock for other state. An unexported field that its
// package writes without the lock its readers take is still reported at
// those writes, unless those writes are in builder methods: methods that
// return their receiver to be chained (NewBuffer(n).SetBlocking(true)),
// take no lock, and so, by that convention, set the value up before it
// is shared, as a constructor does; their accesses are not counted. So
// with the writes of a start method, one that takes no lock and starts
// the goroutine that serves its receiver (func (s *Stream) Start() {
// s.requests = make(...); go s.loop() }): its writes of the receiver's
// fields before the go statement (on every path to it) are its set-up;
// a write after it is counted and reported.
//
// The message gives the share of the accesses that hold the guard,
// counted outside the package's test files when they hold it at two or
// more, so that the package and its test variant, which go vet analyses
// both, print the same message, once.
//
// A helper may take the lock only when a boolean parameter says that its
// caller does not hold it already, releasing it with a defer or under the
// same test (if !locked { b.mu.Lock(); defer b.mu.Unlock() }). Its
// accesses after the test hold the lock in each way it is entered whose
// calls pass the value that takes it, and the calls that pass the other
// value hold it, or not, themselves.
//
//	type Cache struct {
//		mu sync.Mutex
//		m  map[string]int //avcheck:guardedby mu
//	}
//
//	func (c *Cache) Len() int { return len(c.m) } // reported: c.mu is not held
//
// Each access without the guard is reported, and so is a write made with
// only the read lock of an RWMutex guard held. Accesses to a value that is
// still being built in the function that allocated it (through the
// pointer that new, &T{} or make gave it, or that a constructor returned)
// are not counted or reported until it escapes to another goroutine
// (passed to a go statement, sent on a channel, stored into shared state,
// or given to a function that does one of these); from there on they
// are. The same holds in a function called on such a value: a
// constructor that sets its new object up through the helper its methods
// call with the lock held (b := new(Breaker); b.reset(); return b), or
// the struct values it holds by value (c.buckets[i].Init(n), buckets an
// array), calls it with every lock of the object as good as held, and a helper called
// only so is not counted or reported; the object's own fields count, not
// what its pointers, slices or maps lead to. Nor are those in init
// functions. A function runs with the
// guard held when its name ends in "Locked" or "locked", or when it is
// unexported (or a method of an unexported type that nothing exported
// leads to), not used as a value, and every call of it in its package
// holds the guard (the "assumes c.mu is held" contract), directly or
// through such a caller; calls in test files do not count. A deferred
// closure runs with the locks whose unlocks were deferred before it
// (defer mu.Unlock(); defer func() {...}(): the closure runs first).
// Where one path holds an RWMutex's write lock and another its read lock
// (a miss trades the read lock for the write lock, a hit keeps it), the
// lock is read-held where the paths meet. A closure
// kept in an unexported field of function type (r.cancel = func() {...})
// is called wherever the field is: when each value read from the field is
// only called or compared with nil, in the package, a lock of the value
// the closure was stored in that every such call holds is held in it; a
// call from inside the closure itself (a callback that chains the one it
// replaced) runs with the closure's own locks. Where some of those calls hold only the read
// lock of an RWMutex, the function runs with the read lock: its reads
// are guarded, and a write it makes is reported as made with only the
// read lock. The guards of exported fields travel as Facts, so other
// packages' accesses are checked too.
//
// A goroutine can hand state to another over a channel instead of a
// lock: it writes a field, then sends on a channel field or closes it,
// and the receiver reads the field without the lock. An access without
// the guard is not reported when its function receives from a channel
// field that a function of the package signals on after writing the
// accessed field; which of the function's accesses the receive orders is
// not worked out.
//
// A read without the guard is not reported either when it holds another
// lock that every write of the field holds (a field written under both mu
// and wmu can be read under either), or when the read and every write of
// the field run in one goroutine that owns them: a function that one go
// statement starts outside any loop and that nothing else refers to, and
// the functions that only such a goroutine calls (a connection's read
// loop writes a field under the lock for other goroutines and reads it
// itself without). One go statement is taken to start one goroutine per
// object it is given.
//
// The locks a function runs with are worked out for each of its calls
// apart too (regions.EntryContexts): a read is not reported when every
// call holds the guard or a lock that every write of the field holds. An
// item's helper (isExpiredUnsafe) that the item's methods call with the
// item's lock held, and the cache's methods with the cache's lock held,
// reads fields that every write changes with both held. A lock that the
// function cannot name (the cache's, held by a caller that took the item
// from the cache's map) counts by its type and field (any Cache's mu),
// and only for a field of another type: a node's field read with the
// next node's lock held is still reported. A boolean parameter that
// callers pass as a constant is followed: a lock its function takes and
// gives back only when it is true (if lock { c.mu.Lock() }; c.get(k);
// if lock { c.mu.Unlock() }) is held at the calls between for the
// callers that pass true, and a call made only when it is true (if touch
// { item.touch() }) is not made for the callers that pass false.
//
// A test file's accesses without a lock are neither counted nor
// reported: a test looks at state where it knows it is quiet (after
// Close, after wg.Wait).
package guardedby
