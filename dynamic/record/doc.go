// Package record runs a Go test or program and records the trace
// (dynamic/trace) that the predictors read, in one of two ways.
//
// The instrumenting recorder (instrument.go, irecord.go, convert.go),
// avcheck run's default, compiles the packages under test from rewritten
// copies whose probes call the recording runtime, package avrt, and
// converts the runtime's raw events into the trace afterwards. It probes
// what the plan below says, at the probes' own statements and call sites.
//
// The Delve recorder (Record) runs the program under the Delve debugger,
// with no rewriting, and records at its breakpoints. With dynamic/replay,
// this package is one of the two of avcheck that import Delve; none of
// Delve's types leave it.
//
// The probe plan (MakePlan) comes from the regions analyzer: a breakpoint
// at every line with a direct access to shared state (sync/atomic calls
// included) and every go statement, plus the entries of the sync
// package's Mutex, RWMutex, WaitGroup (Go included), Cond and Once
// methods, of the runtime's selects and closes, of the runtime's places
// where a message changes hands or a receive finds its channel closed, and
// of its goroutine exit; a region begins at the first stop inside it. At each stop, every
// goroutine stopped at a breakpoint contributes its events (Record). The recorded order is kept a possible
// execution: an acquire, a Wait, an atomic load or read-modify-write, a
// woken Cond.Wait and a returned Once.Do are recorded at the goroutine's
// next stop, after they returned; a release, a Done, an atomic store and
// a Signal at their entry, before they happen; a channel's send and the
// receive that takes its message inside the runtime, under the channel's
// lock, send first (chans.go); a goroutine's fork before its first event.
// An element of a map with integer, boolean or string keys is a variable
// of its own, identified by the map and the key's value, present or not;
// the map's contents are another, read by len and range and written with
// every element (maps.go). As in the race detector, a send is also a
// read of a variable of its channel's own and a close a write of it; an
// atomic operation is also a plain access of its variable, inside a
// critical section of a lock of the variable's own that only atomic
// operations take, so that it races with plain accesses and not with
// other atomic ones; and an access of a struct or array value is one of
// each of its leaves (shadow.go). A read into the blank identifier, for which
// the compiler emits no instruction, is kept by the build (keep.go).
// Every event goes through trace.Validator as it is made, and recording
// stops at the first one that would make the trace impossible, so the
// trace always validates.
//
// Known approximations, each erring towards fewer predicted interleavings
// or towards reporting more, never towards an invalid trace:
//   - an access is recorded when its line is reached, before the line runs;
//   - a fork is recorded at the parent's next stop after the go statement
//     (or at the child's first stop, if that comes first);
//   - Branches counts, from the source, the conditional statements and
//     the calls that may branch on a value read (calls.go) between two
//     stops of a goroutine: in their innermost shared frame, in the
//     frames that returned from the earlier stop's line to their end, and
//     in those entered from their start to the later stop's line;
//   - a select that returns because a channel is closed is recorded only
//     if it was blocking, with exactly one closed receive case; a message
//     sent or received by a goroutine outside
//     the packages under test is not recorded, nor is the other side of
//     it;
//   - sync/atomic operations are recorded at their lines in the packages
//     under test, without their values.
package record
