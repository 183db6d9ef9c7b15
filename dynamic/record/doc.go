// Package record runs a Go test or program under the Delve debugger and
// records the trace (dynamic/trace) that the predictors read. It is the
// only package of avcheck that imports Delve; none of Delve's types leave
// it.
//
// The probe plan (MakePlan) comes from the regions analyzer: a breakpoint
// at every line with a direct access to shared state, every go statement
// and every intended atomic region's first line, plus the entries of the
// sync package's Mutex, RWMutex and WaitGroup methods and of the runtime's
// goroutine exit. At each stop, every goroutine stopped at a breakpoint
// contributes its events (Record). The recorded order is kept a possible
// execution: an acquire or a Wait is recorded at the goroutine's next stop,
// after it has returned; a release or a Done at its method's entry, before
// it happens; a goroutine's fork before its first event. Every event goes
// through trace.Validator as it is made, and recording stops at the first
// one that would make the trace impossible, so the trace always validates.
//
// Known approximations, each erring towards fewer predicted interleavings
// or towards reporting more, never towards an invalid trace:
//   - an access is recorded when its line is reached, before the line runs;
//   - a fork is recorded at the parent's next stop after the go statement
//     (or at the child's first stop, if that comes first);
//   - Branches counts the conditional statements between two stops of a
//     goroutine in their innermost shared frame, from the source;
//   - channel operations, Cond, Once and sync/atomic are not recorded, so
//     predictions may include interleavings that these would forbid.
package record
