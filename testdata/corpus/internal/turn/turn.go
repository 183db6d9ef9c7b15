// Package turn fixes the order in which the corpus tests' goroutines run,
// so that every recording of a test is the same interleaving, as the
// papers' benchmarks start from one given trace.
//
// The order is imposed through operating-system pipes: avcheck models
// goroutines, locks, WaitGroups (and, as the recorder grows, channels,
// Cond, Once and atomics), not I/O, so to avcheck the goroutines are as
// unordered as if nothing ordered them, and it predicts the other
// interleavings exactly as it would for a run that happened, by chance, in
// this order. The tests' ground truth is that of the program without this
// scheduler.
package turn

import (
	"fmt"
	"os"
	"sync"
)

// Sched runs goroutines one at a time in a given order.
type Sched struct {
	rs, ws   []*os.File // goroutine g waits on rs[g] for its turn
	done, dw *os.File   // a goroutine writes dw when it hands the turn back
}

// New returns a scheduler for n goroutines.
func New(n int) *Sched {
	s := &Sched{}
	for range n {
		r, w := pipe()
		s.rs = append(s.rs, r)
		s.ws = append(s.ws, w)
	}
	s.done, s.dw = pipe()
	return s
}

// Run starts the goroutines, goroutine g running body(g), and gives the
// turn to the goroutines named by order, one after the other: a goroutine
// holds the turn until it calls Yield or returns. order names each
// goroutine once more than it yields. Run returns when all have returned,
// and closes the scheduler.
func (s *Sched) Run(body func(g int), order ...int) {
	var wg sync.WaitGroup
	for g := range s.rs {
		wg.Add(1)
		go goroutine(&wg, g, body, s.rs[g], s.dw)
	}
	for _, g := range order {
		pass(s.ws[g])
		await(s.done)
	}
	wg.Wait()
	for g := range s.rs {
		s.rs[g].Close()
		s.ws[g].Close()
	}
	s.done.Close()
	s.dw.Close()
}

// goroutine is goroutine g. It touches no shared state of its own, so
// that it forms no region around body, and it is done (wg.Done) before
// it hands the turn back, so that everything it records precedes the next
// goroutine's events.
func goroutine(wg *sync.WaitGroup, g int, body func(g int), turn, done *os.File) {
	await(turn)
	body(g)
	wg.Done()
	pass(done)
}

// Yield is called by goroutine g, which holds the turn, to hand it to the
// next goroutine of the order; it returns when g has the turn again.
func (s *Sched) Yield(g int) {
	pass(s.dw)
	await(s.rs[g])
}

// Serial runs each body on a goroutine of its own, all started first, the
// next one beginning only after the previous one has returned, and waits
// for them all.
func Serial(bodies ...func()) {
	order := make([]int, len(bodies))
	for i := range order {
		order[i] = i
	}
	New(len(bodies)).Run(func(g int) { bodies[g]() }, order...)
}

func pipe() (r, w *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		panic(fmt.Sprintf("turn: %v", err))
	}
	return r, prefilled(w)
}

func pass(w *os.File) {
	if _, err := w.Write([]byte{1}); err != nil {
		panic(fmt.Sprintf("turn: %v", err))
	}
}

func await(r *os.File) {
	var b [1]byte
	if _, err := r.Read(b[:]); err != nil {
		panic(fmt.Sprintf("turn: %v", err))
	}
}

// replaying says that avcheck is replaying a witness of the program
// (AVCHECK_REPLAY is set in its environment: dynamic/replay.ProgramEnv).
// The replay forces the witness's order, which the scheduler's would
// contradict, so the scheduler steps aside and the goroutines run as in
// the program without it: they still pass and await the turn through the
// same functions, making the same accesses, but every pipe holds its
// turns in advance (prefilled), so no await waits.
var replaying = os.Getenv("AVCHECK_REPLAY") != ""

// replayTurns is how many turns a pipe holds in advance when the
// scheduler steps aside: more than any corpus test takes.
const replayTurns = 4096

// prefilled returns the write end of a new pipe, with replayTurns turns
// written into it when the scheduler steps aside.
func prefilled(w *os.File) *os.File {
	if replaying {
		if _, err := w.Write(make([]byte, replayTurns)); err != nil {
			panic(fmt.Sprintf("turn: %v", err))
		}
	}
	return w
}
