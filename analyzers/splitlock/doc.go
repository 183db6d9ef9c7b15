// Package splitlock defines an Analyzer that reports updates split across
// two critical sections of one lock.
//
// # Analyzer splitlock
//
// splitlock: report a value read under a lock that decides a write in a later critical section
//
// Every access holds the lock, so the race detector is silent, yet the
// update is not atomic: between the two critical sections another
// goroutine can take the lock and change the state, and the second
// critical section then acts on a stale value.
//
//	c.mu.Lock()
//	n := c.n
//	c.mu.Unlock()
//	c.mu.Lock()
//	c.n = n + 1 // another goroutine's increment is lost
//	c.mu.Unlock()
//
// The analyzer follows the value read under the lock, directly or
// through calls whose Facts say they read the state under their own
// critical section, into a write of the same state (a lost update) or
// into the condition that decides such a write (a stale check), when the
// write is in a different critical section of the same lock. It finds
// getter-then-setter (c := s.Config(); c.Limit++; s.SetConfig(c)),
// check-then-act (if p.current() == nil { p.install(x) }), lookup-then-
// store on a map, and poll-then-take (for q.Len() == 0 {...};
// q.PopFront()).
//
// A write whose own critical section re-reads the state and decides on
// it (double-checked locking) is not reported, also when a call in that
// section makes the write (if q.isEmpty() { return }; q.pop()), or when
// the write is in a call that takes the lock and checks again itself (a
// sweep that a timer, set from a stale look at the queue, starts). Nor
// is a read and write that both run while nothing can interleave them
// yet: in an init function, in a function given TestMain's *testing.M
// before it calls m.Run, or in a test or benchmark of a _test.go file
// before it calls t.Parallel (go test runs it alone), and before that
// function starts a goroutine that can reach the state: one whose
// function, as far as its accesses and those of its static callees
// show, never touches the package-level variable (regions.Startup). Nor is a check that a
// counter is above zero (or a bound) followed by a decrement that only
// the goroutine making the check makes, while every other goroutine only
// increments the counter (a read loop draining what senders add; the
// same the other way round): the others' updates keep the check true.
//
// The fix is to hold the lock across the read and the write, or to
// re-check under the second critical section, or to offer one method
// that does both.
package splitlock
