// Package regions defines an Analyzer that infers the intended atomic
// regions of every function, for the rest of avcheck.
//
// # Analyzer regions
//
// regions: infer intended atomic regions (reports nothing)
//
// A region is a stretch of one function's code meant to run without
// interference from other goroutines. The analyzer infers them from three
// sources, in decreasing confidence:
//
//   - annotations: //avcheck:atomic on a function (its whole body) or just
//     before a block statement;
//   - lock scopes: from Lock or RLock of a sync.Mutex or sync.RWMutex to
//     the matching Unlock, or to the end of the function when the unlock is
//     deferred, and on the branch where TryLock succeeded; nested scopes
//     belong to the outermost one (PECAN, section 4.1);
//   - proximity: accesses to shared state, directly or through calls, that
//     lie within -maxd source lines of each other in one function with no
//     operation that orders goroutines between them (a go statement, a
//     channel operation or select, WaitGroup.Wait, Cond.Wait, Once.Do); the
//     first and last access are to ordinary variables, not to channels,
//     mutexes or atomics (BEST, section V).
//
// Shared state is what another goroutine can reach: package-level
// variables, whatever is reached from a parameter, the receiver, a
// captured variable or a value received from a channel, and a function's
// own variables and objects (those it allocates, and a constructor's
// result) from where they escape: captured by or passed to a go
// statement's function, sent on a channel, stored into shared state, or
// passed to a function whose Fact says it lets them escape.
//
// Its Result lists every function's accesses to shared state (with the
// expression, the kind of access and the locks held, each lock with its
// critical section), the operations that order goroutines, and the
// regions. Each function and method also gets a Fact summarising what it
// reads and writes of state its callers can see, under which of its own
// locks, which results carry values read from that state, and which
// locks it returns holding; callers in any package see through the call.
package regions
