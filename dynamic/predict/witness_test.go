package predict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// TestWitnessLockHeldAtWindowStart: a lock held at the start of the
// witness window by a goroutine that releases it inside the window is
// needed by the goroutine that acquires it later, so the search runs the
// holder to its release; so is a read lock that a writer waits for. The
// trace is longer than wholeTraceLimit, so only the window around the
// race is searched.
func TestWitnessLockHeldAtWindowStart(t *testing.T) {
	for _, tc := range []struct{ name, decl, take, give string }{
		{"mutex", "", "acq", "rel"},
		{"read lock", "rw m\n", "racq", "rrel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(tc.decl)
			b.WriteString("1 fork 2\n1 fork 3\n1 fork 4\n1 fork 5\n")
			b.WriteString("3 " + tc.take + " m\n")
			// Goroutine 4 works on its own variable long enough that the
			// window around the race starts after goroutine 3 took m.
			for range wholeTraceLimit + 100 {
				b.WriteString("4 rd own @50\n")
			}
			b.WriteString("5 rd x @60\n") // the race's first access
			b.WriteString("3 rd y @61\n")
			b.WriteString("3 " + tc.give + " m\n")
			b.WriteString("2 acq m\n")
			b.WriteString("2 wr y @62\n")
			b.WriteString("2 rel m\n")
			b.WriteString("2 wr x @63\n") // the race's second access
			tr := tt(t, b.String())

			var first, second uint32
			for i, e := range tr.Events {
				switch e.Site {
				case 60:
					first = uint32(i)
				case 63:
					second = uint32(i)
				}
			}
			g := witnessGoal{targets: []uint32{first, second}, adjacent: true}
			start, _, ok := witnessWindow(tr, g)
			if !ok || start <= 4 {
				t.Fatalf("window starts at %d (ok %v); the test needs it after the acquisition of m", start, ok)
			}
			sched := mustWitness(t, tr, g)
			got := fmt.Sprint(sched[len(sched)-2:])
			if want := fmt.Sprint([]uint32{first, second}); got != want {
				t.Errorf("witness ends %s, want the race's accesses back to back %s", got, want)
			}

			// Predict reports the race, at predicted (races are not
			// filtered).
			res := Predict(tr, Options{})
			var races []string
			for _, f := range res.Reported() {
				if f.Kind == KindRace {
					races = append(races, fixtureLine(tr, &f))
				}
			}
			if len(races) != 1 {
				t.Errorf("races reported: %q, want the one on x", races)
			}
		})
	}
}

// TestWitnessPrunesDeadlockedStates: a race on a generated trace of 10K
// events between a read that goroutine 3 makes holding a lock and a write
// of goroutine 2 some 8,600 events later, whose goroutine takes that lock
// many times on the way. A schedule exists (goroutine 3 takes the lock
// only after goroutine 2's last acquisition of it); the search finds it
// within its budget only by cutting off, at once, each state where
// goroutine 3 already holds the lock (witnessSearch.deadlocked): without
// that it tries every interleaving of the other goroutines first.
func TestWitnessPrunesDeadlockedStates(t *testing.T) {
	s := tracegen.Shape{Seed: 3, Events: 10_000, Goroutines: 8, Locks: 16, Vars: 64, Nesting: 3, Unlocked: 0.05, Interleaved: true, Violations: true}
	tr, err := trace.ReadAll(tracegen.NewShape(s))
	if err != nil {
		t.Fatal(err)
	}
	read, write := uint32(193), uint32(8786)
	if r, w := tr.Events[read], tr.Events[write]; r.G != 3 || r.Kind != trace.KindRead || w.G != 2 || w.Kind != trace.KindWrite || r.Obj != w.Obj {
		t.Fatalf("the generated trace changed: events %d and %d are %+v and %+v", read, write, r, w)
	}
	mustWitness(t, tr, witnessGoal{targets: []uint32{read, write}, adjacent: true})
}

// mustWitness returns the witness schedule of g, which must have one that
// the validator accepts.
func mustWitness(t *testing.T, tr *trace.Trace, g witnessGoal) []uint32 {
	t.Helper()
	m := newSyncMeta(tr)
	from, sched, _, err := buildWitness(m, m.newPrefixState(), g)
	if err != nil {
		t.Fatalf("no witness: %v", err)
	}
	if err := validateSchedule(m, m.newPrefixState(), from, sched, g); err != nil {
		t.Fatalf("witness does not validate: %v", err)
	}
	return sched
}
