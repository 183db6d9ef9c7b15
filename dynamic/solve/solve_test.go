package solve

import (
	"math/rand/v2"
	"os/exec"
	"testing"
	"time"
)

// engine makes a fresh solver of one kind for n events.
type engine struct {
	name string
	new  func(t testing.TB, n int, b Budget) Solver
}

func giniEngine() engine {
	return engine{"gini", func(t testing.TB, n int, b Budget) Solver { return New(n, b) }}
}

// forEngine runs test once per available engine, on a recorded solver.
func forEngine(t *testing.T, n int, test func(t *testing.T, f *formula)) {
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			s := e.new(t, n, Budget{})
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			test(t, record(s, n))
		})
	}
}

// wantCheck checks and, when the answer is Sat, validates the order.
func wantCheck(t *testing.T, f *formula, want Status, assumptions ...Lit) {
	t.Helper()
	got := f.Check(assumptions...)
	if got != want {
		t.Fatalf("Check(%v) = %v, want %v", assumptions, got, want)
	}
	if got != Sat {
		return
	}
	if err := f.satisfies(f.Order(), assumptions); err != nil {
		t.Fatalf("Check(%v) = sat, but the order is wrong: %v", assumptions, err)
	}
}

func TestTriangleIsUnsat(t *testing.T) {
	forEngine(t, 3, func(t *testing.T, f *formula) {
		f.Assert(f.Before(0, 1))
		f.Assert(f.Before(1, 2))
		wantCheck(t, f, Sat)
		f.Assert(f.Before(2, 0))
		wantCheck(t, f, Unsat)
	})
}

func TestCycleThroughFixedEdges(t *testing.T) {
	// Goroutine A runs 0 -> 1 -> 2, goroutine B runs 3 -> 4 -> 5. The atoms
	// 2 < 3 and 4 < 0 close a cycle only through program order.
	forEngine(t, 6, func(t *testing.T, f *formula) {
		for _, e := range [][2]int{{0, 1}, {1, 2}, {3, 4}, {4, 5}} {
			f.Edge(e[0], e[1])
		}
		a, b := f.Before(2, 3), f.Before(4, 0)
		wantCheck(t, f, Sat, a)
		wantCheck(t, f, Sat, b)
		wantCheck(t, f, Unsat, a, b)
		// An atom against program order.
		wantCheck(t, f, Unsat, f.Before(2, 0))
		wantCheck(t, f, Sat, f.Before(0, 2))
	})
}

func TestFixedCycleIsUnsat(t *testing.T) {
	forEngine(t, 3, func(t *testing.T, f *formula) {
		f.Edge(0, 1)
		f.Edge(1, 2)
		wantCheck(t, f, Sat)
		f.Edge(2, 0)
		wantCheck(t, f, Unsat)
	})
}

// mutex builds two goroutines, each with a critical section of one lock
// (acquire, access, release): A is 0 1 2, B is 3 4 5. It asserts mutual
// exclusion as the disjunction of the two orders of the sections.
func mutex(f *formula) {
	for _, e := range [][2]int{{0, 1}, {1, 2}, {3, 4}, {4, 5}} {
		f.Edge(e[0], e[1])
	}
	f.Assert(f.Or(f.Before(2, 3), f.Before(5, 0)))
}

func TestMutualExclusion(t *testing.T) {
	forEngine(t, 6, func(t *testing.T, f *formula) {
		mutex(f)
		wantCheck(t, f, Sat)
		// B's access between A's acquire and A's release: excluded.
		wantCheck(t, f, Unsat, f.Before(0, 4), f.Before(4, 2))
		// Either section first is possible.
		wantCheck(t, f, Sat, f.Before(4, 1))
		wantCheck(t, f, Sat, f.Before(1, 4))
		// B's release before A's access forces B's whole section first.
		wantCheck(t, f, Sat, f.Before(5, 1))
		if got, want := f.Order(), []int{3, 4, 5, 0, 1, 2}; !equal(got, want) {
			t.Errorf("Order() = %v, want %v", got, want)
		}
	})
}

func TestAssumptionsFlipTheAnswer(t *testing.T) {
	forEngine(t, 4, func(t *testing.T, f *formula) {
		x := f.Before(0, 1)
		y := f.Before(1, 2)
		f.Assert(f.Or(x.Not(), y.Not(), f.Before(3, 0)))
		wantCheck(t, f, Sat, x, y)
		wantCheck(t, f, Unsat, x, y, f.Before(0, 3))
		// The assumptions of one Check do not stay.
		wantCheck(t, f, Sat, f.Before(0, 3))
		wantCheck(t, f, Sat, x.Not())
		wantCheck(t, f, Unsat, x, x.Not())
		wantCheck(t, f, Sat)
	})
}

func TestAndOrNesting(t *testing.T) {
	forEngine(t, 5, func(t *testing.T, f *formula) {
		// (0<1 & 1<2 & 2<3) | (3<1 & 4<3), and not (4<0).
		chain := f.And(f.Before(0, 1), f.Before(1, 2), f.Before(2, 3))
		other := f.And(f.Before(3, 1), f.Before(4, 3))
		f.Assert(f.Or(chain, other))
		f.Assert(f.Before(4, 0).Not())
		wantCheck(t, f, Sat)
		// 3 before 2 rules out the first alternative; the second needs
		// 0 < 4 < 3 < 1.
		wantCheck(t, f, Sat, f.Before(3, 2))
		wantCheck(t, f, Unsat, f.Before(3, 2), f.Before(1, 4))
		wantCheck(t, f, Unsat, chain.Not(), f.Before(1, 0))
		wantCheck(t, f, Sat, chain.Not(), f.Before(2, 0))
		// A negated conjunction: not all of its atoms.
		wantCheck(t, f, Unsat, other.Not(), f.Before(3, 2))
		wantCheck(t, f, Sat, other.Not(), f.Before(2, 3))
		// Empty conjunction and disjunction.
		wantCheck(t, f, Sat, f.And())
		wantCheck(t, f, Unsat, f.Or())
		wantCheck(t, f, Sat, f.Or().Not())
		// Single arguments.
		wantCheck(t, f, Unsat, f.And(f.Before(0, 4)), f.Or(f.Before(4, 0)))
	})
}

func TestOrderRespectsEdgesAndAtoms(t *testing.T) {
	// A window of three goroutines of five events; every cross pair
	// constrained one way or the other by asserted atoms chosen from a
	// fixed order, so exactly that order's constraints hold.
	const n = 15
	forEngine(t, n, func(t *testing.T, f *formula) {
		for g := range 3 {
			for i := range 4 {
				f.Edge(g*5+i, g*5+i+1)
			}
		}
		r := rand.New(rand.NewPCG(1, 2))
		want := r.Perm(n)
		// Keep each goroutine's events in program order within want.
		for g := range 3 {
			var idx []int
			for i, e := range want {
				if e/5 == g {
					idx = append(idx, i)
				}
			}
			for k, i := range idx {
				want[i] = g*5 + k
			}
		}
		pos := make([]int, n)
		for i, e := range want {
			pos[e] = i
		}
		for a := range n {
			for b := range n {
				if a/5 != b/5 && pos[a] < pos[b] && r.IntN(2) == 0 {
					f.Assert(f.Before(a, b))
				}
			}
		}
		wantCheck(t, f, Sat)
	})
}

func TestBudgetGivesUnknown(t *testing.T) {
	// Atoms around a cycle of k events: the first model almost surely
	// orients them into cycles, and one round cannot refute it.
	const k = 12
	s := New(k, Budget{Rounds: 1})
	f := record(s, k)
	var ring []Lit
	for i := range k {
		ring = append(ring, f.Or(f.Before(i, (i+1)%k), f.Before(i, (i+2)%k)))
	}
	f.Assert(f.And(ring...))
	if got := f.Check(); got != Unknown {
		t.Fatalf("Check with one round = %v, want unknown", got)
	}
	if o := f.Order(); o != nil {
		t.Errorf("Order() after unknown = %v, want nil", o)
	}
	// Without the bound it is decided: every event before one of its two
	// successors on the ring is impossible (the last event's successors
	// come first).
	s2 := record(New(k, Budget{}), k)
	var ring2 []Lit
	for i := range k {
		ring2 = append(ring2, s2.Or(s2.Before(i, (i+1)%k), s2.Before(i, (i+2)%k)))
	}
	s2.Assert(s2.And(ring2...))
	wantCheck(t, s2, Unsat)
}

func TestRandomAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			// The external engines start a process per instance.
			count := 300
			if e.name != "gini" {
				count = 100
			}
			for i := range count {
				n := 2 + r.IntN(6)
				s := e.new(t, n, Budget{})
				f := record(s, n)
				for _, as := range randomInstance(r, f, n) {
					want := f.bruteForce(as)
					got := f.Check(as...)
					if got != want {
						t.Fatalf("instance %d (n=%d): Check(%v) = %v, brute force says %v", i, n, as, got, want)
					}
					if got == Sat {
						if err := f.satisfies(f.Order(), as); err != nil {
							t.Fatalf("instance %d: %v", i, err)
						}
					}
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// externalEngine is the named external solver, or false (saying why in
// the log) when it is not on PATH.
func externalEngine(t testing.TB, name string) (engine, bool) {
	if _, err := exec.LookPath(name); err != nil {
		t.Logf("%s is not on PATH (Debian package %s): its engine is not tested", name, name)
		return engine{}, false
	}
	return engine{name, func(t testing.TB, n int, b Budget) Solver {
		s, err := NewExternal(name, n, b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}}, true
}

// engines returns the default engine and the external solvers on PATH.
func engines(t testing.TB) []engine {
	es := []engine{giniEngine()}
	for _, name := range []string{"z3", "cvc5"} {
		if e, ok := externalEngine(t, name); ok {
			es = append(es, e)
		}
	}
	return es
}

func TestLargeWindowWithoutClosure(t *testing.T) {
	// Above closureLimit the fixed edges get no closure: no unit clauses
	// nor triangles, and lazy refinement alone must find the long cycles.
	const n = closureLimit + 1000
	half := n / 2
	f := record(New(n, Budget{}), n)
	for i := 1; i < n; i++ {
		if i != half {
			f.Edge(i-1, i)
		}
	}
	a, b := f.Before(half-1, half), f.Before(n-1, 0)
	wantCheck(t, f, Sat, a)
	wantCheck(t, f, Sat, b)
	wantCheck(t, f, Unsat, a, b)
	wantCheck(t, f, Unsat, f.Before(half-1, 0))
}

func TestTimeBudgetGivesUnknown(t *testing.T) {
	s := New(3, Budget{Time: time.Nanosecond})
	s.Assert(s.Before(0, 1))
	if got := s.Check(); got != Unknown {
		t.Errorf("Check with a spent budget = %v, want unknown", got)
	}
}

func TestMisuseNamesTheMistake(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(s Solver)
		want string
	}{
		{"same event", func(s Solver) { s.Before(1, 1) }, "solve: Before(1, 1): an event is not before itself"},
		{"out of range", func(s Solver) { s.Edge(0, 3) }, "solve: Edge: event 3 out of range [0, 3)"},
		{"not a literal", func(s Solver) { s.Assert(0) }, "solve: 0 is not a literal of this solver"},
		{"foreign literal", func(s Solver) { s.Check(Lit(1 << 20)) }, "solve: 1048576 is not a literal of this solver"},
	} {
		for _, e := range engines(t) {
			t.Run(c.name+"/"+e.name, func(t *testing.T) {
				s := e.new(t, 3, Budget{})
				defer func() { _ = s.Close() }()
				defer func() {
					if r := recover(); r != c.want {
						t.Errorf("panic %v, want %q", r, c.want)
					}
				}()
				c.do(s)
			})
		}
	}
}

// TestVar checks that a variable of Var is decided by the constraints
// that use it, in both polarities, and that the order follows it.
func TestVar(t *testing.T) {
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			s := e.new(t, 3, Budget{})
			defer func() { _ = s.Close() }()
			x, y := s.Var(), s.Var()
			// x -> 0<1, and not x -> 1<0: x says which comes first.
			s.Assert(s.Or(x.Not(), s.Before(0, 1)))
			s.Assert(s.Or(x, s.Before(1, 0)))
			// y -> (x and 2<0).
			s.Assert(s.Or(y.Not(), s.And(x, s.Before(2, 0))))
			tests := []struct {
				assume []Lit
				want   Status
				first  int // the event the order must put first, -1 for any
			}{
				{[]Lit{x}, Sat, -1},
				{[]Lit{x, s.Before(1, 0)}, Unsat, -1},
				{[]Lit{x.Not(), s.Before(0, 1)}, Unsat, -1},
				{[]Lit{x.Not()}, Sat, -1},
				{[]Lit{y}, Sat, 2},
				{[]Lit{y, x.Not()}, Unsat, -1},
				{[]Lit{y, s.Before(0, 2)}, Unsat, -1},
				{[]Lit{y.Not(), s.Before(0, 2), s.Before(1, 0)}, Sat, 1},
			}
			for _, tt := range tests {
				got := s.Check(tt.assume...)
				if got != tt.want {
					t.Fatalf("Check(%v) = %v, want %v", tt.assume, got, tt.want)
				}
				if got == Sat && tt.first >= 0 {
					if o := s.Order(); o[0] != tt.first {
						t.Errorf("Check(%v): order %v, want %d first", tt.assume, o, tt.first)
					}
				}
			}
		})
	}
}

// A closed Budget.Stop ends a check that would run long (the pigeonhole
// principle for 13 pigeons and 12 holes, beyond any CDCL solver's reach)
// with Unknown, within a fraction of a second.
func TestStopGivesUnknown(t *testing.T) {
	stop := make(chan struct{})
	s := New(2, Budget{Time: time.Minute, Stop: stop})
	const holes = 12
	var p [holes + 1][holes]Lit
	for i := range p {
		for j := range p[i] {
			p[i][j] = s.Var()
		}
		s.Assert(s.Or(p[i][:]...))
	}
	for j := range holes {
		for i := range p {
			for k := i + 1; k < len(p); k++ {
				s.Assert(s.Or(p[i][j].Not(), p[k][j].Not()))
			}
		}
	}
	time.AfterFunc(200*time.Millisecond, func() { close(stop) })
	start := time.Now()
	got := s.Check()
	if took := time.Since(start); got != Unknown || took > time.Second {
		t.Errorf("Check stopped after 200ms = %v after %v, want unknown within a second", got, took.Round(time.Millisecond))
	}
	if got := s.Check(); got != Unknown {
		t.Errorf("Check with Stop closed = %v, want unknown", got)
	}
}
