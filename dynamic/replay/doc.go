// Package replay runs a program again under the Delve debugger and forces
// on it the schedule of a finding's witness, to see the violation happen
// (the `replayed` level), in the spirit of PECAN's deterministic
// scheduling (shared/seeds/003_50220ead9b146295.txt, section 7): each
// goroutine the witness names is suspended at its next event until the
// schedule says it goes, and goroutines are matched between the recorded
// run and the replay by how they were created, not by their runtime ids.
//
// A goroutine is held at a breakpoint on the line of its next step: the
// replay forgets the breakpoint its thread stands at, so that on the next
// continue the thread executes the trap instruction again instead of
// stepping over it, and stops again at once. The other threads run in
// between; the held goroutine stays a goroutine at a breakpoint, which
// the runtime may even preempt and move to another thread, where it traps
// again. With dynamic/record, it is one of the two packages of avcheck
// that import Delve.
package replay
