// Package replay runs a program again under the Delve debugger and forces
// on it the schedule of a finding's witness, to see the violation happen
// (the `replayed` level), in the spirit of PECAN's deterministic
// scheduling (shared/seeds/003_50220ead9b146295.txt, section 7): each
// goroutine the witness names is suspended at its next event until the
// schedule says it goes, and goroutines are matched between the recorded
// run and the replay by how they were created, not by their runtime ids.
// With dynamic/record, it is one of the two packages of avcheck that
// import Delve; none of Delve's types leave it. avcheck run and avcheck
// test replay each proven finding's witness with it (-replay), and
// Observe says whether what the replay saw raises the finding to
// replayed.
//
// # How a goroutine is held
//
// A goroutine is held at a breakpoint on the line of its next step: the
// replay forgets the breakpoint its thread stands at, so that on the next
// continue the thread executes the trap instruction again instead of
// stepping over it, and stops again at once. The other threads run in
// between. The held goroutine stays a goroutine at a breakpoint, which
// the runtime may preempt and move to another thread, where it traps
// again; the program is also stopped every 20ms, to see goroutines that
// no breakpoint stops. While a goroutine is held, the debugger loops on
// its traps and keeps a CPU busy.
//
// # The schedule
//
// FromTrace turns a finding's witness into steps: the witness's events
// except region boundaries, a goroutine's end, the events at a defer
// statement's line (the deferred call runs at the return, where no
// breakpoint of that line stops it) and the writes made once their
// assignment's call returned (v = f(), which the goroutine makes back
// from the call, in the middle of the line), each with the goroutine's
// arrival at its line that the recorded events count. Consecutive steps of one
// goroutine at one arrival are one turn: the goroutine goes past the line
// at once. A turn ends when its goroutine has left the line: it stops at
// another of the witness's lines, it is parked elsewhere, or it has
// ended. A goroutine blocked in its step's operation has not done it: the
// witness places an acquire, a Wait or a receive where it returns, after
// what it waits for. A test's goroutine is matched by the order of the
// tests run, any other by its go statement and the order of the ids of
// that statement's goroutines.
//
// What is not forced: the trace's events before the witness departs from
// the recorded order (each goroutine runs freely up to its first step),
// the goroutines the witness does not name, and each named goroutine
// after its last step. The replay checks that each access reaches the
// same variable as the witness's other steps on its object (by address
// within the replay), reads the integers, booleans, pointers (the
// address they hold), slices (their header) and strings the steps read
// (before the line runs) and wrote (once it has), and reports how the
// program ended.
//
// A race's two accesses are not ordered, so its witness is not forced to
// the end: once the steps before the first step its two goroutines make
// on the arrivals at their accesses' lines have run in order, each of the
// two is held at its access's line, and the race shows when both stand
// there at once, neither waiting for the other, and their accesses'
// expressions, evaluated in their frames, reach one variable (PECAN
// places a race's two accesses next to each other in the schedule it
// generates, section 6). The program then runs freely to its end. So a
// race inside one line (t.pending++ against another goroutine's read),
// whose steps a replay that holds goroutines at lines cannot split, is
// shown too. A race whose access comes after a lock, a receive or
// another operation the replay holds goroutines for on its line is
// forced as any witness: a goroutine standing at that line could be
// waiting for the other.
//
// What cannot be forced, reported as the Result's Reason and never as an
// error: two steps of one goroutine at one arrival at a line with another
// goroutine's step between them, outside a race's two accesses (a replay
// holds goroutines at lines, not at instructions); a schedule the program does not follow,
// when every goroutine is held or blocked before the next step (ten looks
// in a row, 20ms apart), with where the waited-for goroutine is; the
// program's own order through I/O, when the goroutine whose step comes
// next is then parked waiting for I/O (a pipe, a file, a socket: the
// corpus's turn scheduler), which no trace records and which the replay
// does not break; the program's end before the last step; the time
// limit.
//
// # What confirms a finding
//
// Observe raises a finding only when every step ran in the witness's
// order and the values its accesses saw differ from those of any serial
// order as the pattern says (for R-W-W, the interleaved write wrote
// another value than the region had read, which the region's write then
// loses), or the program failed where the recorded run had not; or, for
// a race, when its two goroutines stood at its accesses at once, on one
// variable; or, for an atomic-set finding, when its four values differ
// from those of both serial orders of its two regions, on the values
// known. W-W-W leaves values some serial order leaves too, so only a
// failure confirms it.
//
// A replayed program has ProgramEnv (AVCHECK_REPLAY=1) in its
// environment when avcheck run or avcheck test replays it, so that a
// test that orders its goroutines itself can step aside: the corpus's
// turn scheduler (testdata/corpus/internal/turn) does. Replay itself
// runs the program in its caller's environment; the tests of this
// package call it without ProgramEnv, so the scheduler stays and the
// replay reports the program's own order through I/O.
//
// Measured (TestCorpus, TestFromRecording, and BenchmarkReplayCorpus in
// cmd/avcheck, whose figures docs/run.md gives): the lost updates of
// testdata/record/counter, seqtests and subtests (the last two between
// tests), banktwo's R-W-R and the race of testdata/corpus/queuedjob are
// forced from the predictor's own witnesses. A test's goroutine stops
// once at testing.tRunner, and any goroutine once at runtime.goexit1 when
// a go statement's goroutines are matched, so that tests and goroutines
// that end before the program is next stopped still count in their
// ranks. The races of queuedjob and escrange (inside one line) are shown
// with their goroutines standing at both accesses at once.
//
// Not measured yet: a program whose garbage collector stops the world
// while a goroutine is held (the held goroutine is at a breakpoint, so
// the runtime can preempt it, but this was not tested).
package replay
