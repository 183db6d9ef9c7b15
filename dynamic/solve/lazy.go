package solve

import (
	"fmt"
	"slices"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
)

// closureLimit is the largest window whose fixed edges get a transitive
// closure (n*n bits: 8 MiB at this size). Above it the engine relies on
// lazy cycle elimination alone, which is still complete.
const closureLimit = 8192

// lazy is the default engine: a SAT solver over order atoms, refined by
// cycle elimination. Each atom O(a) < O(b), a < b, is one Boolean variable;
// O(b) < O(a) is its negation, so antisymmetry and totality hold by
// construction and only transitivity is left out. A model of the
// propositional skeleton orients every atom; together with the fixed edges
// the chosen orientations form a graph, and the model is an order exactly
// when that graph is acyclic. Each cycle is a transitivity violation, and the
// clause that negates its atoms holds in every total order, so it is learnt
// permanently and the SAT solver asked again. This is the lazy encoding of
// integer difference logic that seed 001 section 4.2 appeals to
// (O(a) < O(b) reduces to cycle detection), with the refinement loop of
// FindAV (seed 002 section VIII): solve, examine the model, block, repeat.
type lazy struct {
	n      int
	budget Budget
	sat    *gini.Gini
	truth  z.Lit // a variable asserted true: And() and Or() of nothing

	atomVar map[uint64]z.Var // atom (a, b), a < b, to its variable
	atomOf  []atomPair       // variable to its atom; a == b means not an atom
	used    []bool           // variable is an atom that occurs in a constraint
	usedAt  []z.Var          // the used atoms, in the order they became used

	fixed      [][]int32 // fixed edges, successor lists
	fixedSet   map[uint64]struct{}
	closure    *closure // transitive closure of fixed; nil when stale or too big
	closureOK  bool     // closure reflects every fixed edge
	unitsUpTo  int      // usedAt[:unitsUpTo] have had fixed-order units added
	fixedCycle bool     // the fixed edges alone are cyclic
	// asserted guards every asserted constraint, and Check assumes it.
	// Without it the clauses are the Tseitin definitions, the fixed
	// orders and learnt transitivity, which every total order satisfies,
	// so gini never finds its clauses unsatisfiable without assumptions:
	// gini v1.0.4 cannot be asked again after that (its next Solve fails
	// its own model check and exits the process).
	asserted z.Lit

	order []int // the last Sat order, nil otherwise
	cyc   cycleFinder

	// Stats of the last Check, for benchmarks and debugging.
	rounds, learnt int
}

type atomPair struct{ a, b int32 }

// New returns the default engine for n events: pure Go, the SAT solver
// github.com/go-air/gini with lazy cycle elimination. b bounds every Check.
func New(n int, b Budget) Solver {
	s := &lazy{
		n:        n,
		budget:   b,
		sat:      gini.New(),
		atomVar:  make(map[uint64]z.Var),
		atomOf:   []atomPair{{}}, // variable 0 does not exist
		used:     []bool{false},
		fixed:    make([][]int32, n),
		fixedSet: make(map[uint64]struct{}),
	}
	s.truth = s.newVar().Pos()
	s.addClause(s.truth)
	s.asserted = s.newVar().Pos()
	return s
}

// addClause adds the clause of ms, which it may reorder. gini requires
// clauses without repeated literals, so they are removed, and a tautology
// (a literal and its negation) is not added at all.
func (s *lazy) addClause(ms ...z.Lit) {
	slices.Sort(ms)
	ms = slices.Compact(ms)
	for i := 1; i < len(ms); i++ {
		if ms[i] == ms[i-1].Not() {
			return
		}
	}
	for _, m := range ms {
		s.sat.Add(m)
	}
	s.sat.Add(z.LitNull)
}

func (s *lazy) newVar() z.Var {
	v := s.sat.Lit().Var()
	for int(v) >= len(s.atomOf) {
		s.atomOf = append(s.atomOf, atomPair{})
		s.used = append(s.used, false)
	}
	return v
}

func pairKey(a, b int) uint64 { return uint64(a)<<32 | uint64(uint32(b)) }

func (s *lazy) checkEvent(what string, e int) {
	if e < 0 || e >= s.n {
		panic(fmt.Sprintf("solve: %s: event %d out of range [0, %d)", what, e, s.n))
	}
}

func (s *lazy) Before(a, b int) Lit {
	s.checkEvent("Before", a)
	s.checkEvent("Before", b)
	if a == b {
		panic(fmt.Sprintf("solve: Before(%d, %d): an event is not before itself", a, b))
	}
	neg := false
	if a > b {
		a, b = b, a
		neg = true
	}
	v, ok := s.atomVar[pairKey(a, b)]
	if !ok {
		v = s.newVar()
		s.atomVar[pairKey(a, b)] = v
		s.atomOf[v] = atomPair{int32(a), int32(b)}
	}
	if neg {
		return Lit(v.Neg().Dimacs())
	}
	return Lit(v.Pos().Dimacs())
}

func (s *lazy) Edge(a, b int) {
	s.checkEvent("Edge", a)
	s.checkEvent("Edge", b)
	k := pairKey(a, b)
	if _, ok := s.fixedSet[k]; ok {
		return
	}
	s.fixedSet[k] = struct{}{}
	s.fixed[a] = append(s.fixed[a], int32(b))
	s.closureOK = false
}

// lit converts l to the SAT solver's literal, marking an atom as used: only
// used atoms take part in cycle elimination and in Order.
func (s *lazy) lit(l Lit) z.Lit {
	v := int(l)
	if v < 0 {
		v = -v
	}
	if l == 0 || v >= len(s.atomOf) {
		panic(fmt.Sprintf("solve: %d is not a literal of this solver", l))
	}
	if p := s.atomOf[v]; p.a != p.b && !s.used[v] {
		s.used[v] = true
		s.usedAt = append(s.usedAt, z.Var(v))
	}
	return z.Dimacs2Lit(int(l))
}

func (s *lazy) And(ls ...Lit) Lit {
	switch len(ls) {
	case 0:
		return Lit(s.truth.Dimacs())
	case 1:
		s.lit(ls[0])
		return ls[0]
	}
	// Tseitin: t <-> l1 & ... & lk.
	t := s.newVar().Pos()
	long := []z.Lit{t}
	for _, l := range ls {
		m := s.lit(l)
		s.addClause(t.Not(), m)
		long = append(long, m.Not())
	}
	s.addClause(long...)
	return Lit(t.Dimacs())
}

func (s *lazy) Or(ls ...Lit) Lit {
	switch len(ls) {
	case 0:
		return Lit(s.truth.Not().Dimacs())
	case 1:
		s.lit(ls[0])
		return ls[0]
	}
	// Tseitin: t <-> l1 | ... | lk.
	t := s.newVar().Pos()
	long := []z.Lit{t.Not()}
	for _, l := range ls {
		m := s.lit(l)
		s.addClause(t, m.Not())
		long = append(long, m)
	}
	s.addClause(long...)
	return Lit(t.Dimacs())
}

func (s *lazy) Assert(l Lit) {
	s.addClause(s.asserted.Not(), s.lit(l))
}

func (s *lazy) Check(assumptions ...Lit) Status {
	s.order = nil
	s.rounds, s.learnt = 0, 0
	start := time.Now()
	as := make([]z.Lit, 0, len(assumptions)+1)
	as = append(as, s.asserted)
	for _, l := range assumptions {
		as = append(as, s.lit(l))
	}
	if !s.prepareFixed() {
		return Unsat
	}
	oriented := make([]bool, len(s.atomOf))
	for {
		if s.budget.Rounds > 0 && s.rounds >= s.budget.Rounds {
			return Unknown
		}
		// gini's Solve keeps the deadline of an earlier Try, so every
		// call is a Try; "no bound" is a bound nothing reaches.
		left := time.Duration(1<<62 - 1)
		if s.budget.Time > 0 {
			left = s.budget.Time - time.Since(start)
			if left <= 0 {
				return Unknown
			}
		}
		s.rounds++
		s.sat.Assume(as...)
		switch s.sat.Try(left) {
		case -1:
			return Unsat
		case 0:
			return Unknown
		}
		for _, v := range s.usedAt {
			oriented[v] = s.sat.Value(v.Pos())
		}
		order, cycles := s.cyc.find(s, oriented)
		if order != nil {
			s.order = order
			return Sat
		}
		for _, c := range cycles {
			s.addClause(c...)
		}
		s.learnt += len(cycles)
	}
}

// prepareFixed brings the closure of the fixed edges up to date and turns
// every used atom that the fixed edges decide into a unit clause, so that the
// SAT solver never proposes an orientation against program order or
// happens-before. It reports false when the fixed edges are cyclic.
func (s *lazy) prepareFixed() bool {
	if !s.closureOK {
		s.closureOK = true
		s.unitsUpTo = 0
		s.closure = nil
		c, ok := newClosure(s.n, s.fixed)
		s.fixedCycle = !ok
		if ok && s.n <= closureLimit {
			s.closure = c
		}
	}
	if s.fixedCycle {
		return false
	}
	if s.closure != nil {
		for _, v := range s.usedAt[s.unitsUpTo:] {
			p := s.atomOf[v]
			switch {
			case s.closure.reaches(int(p.a), int(p.b)):
				s.addClause(v.Pos())
			case s.closure.reaches(int(p.b), int(p.a)):
				s.addClause(v.Neg())
			}
		}
		s.unitsUpTo = len(s.usedAt)
	}
	return true
}

func (s *lazy) Order() []int {
	if s.order == nil {
		return nil
	}
	return append([]int(nil), s.order...)
}

func (s *lazy) Close() error { return nil }
