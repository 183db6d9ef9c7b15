package solve

import (
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
)

// triangleLimit bounds the triangles addTriangles adds to one solver (two
// clauses each), so that a dense window cannot exhaust memory; beyond it
// lazy refinement alone deals with transitivity.
const triangleLimit = 1 << 20

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

	gates  []gate   // variable to its definition by And or Or, if any
	roots  []z.Lit  // the asserted literals
	seen   []uint32 // literal -> the justification pass that visited it
	pass   uint32
	needed []z.Lit // the atom literals the current model's justification uses

	nbrs      []uint64 // per event, a bit per event it shares a used atom with
	triUpTo   int      // usedAt[:triUpTo] are in nbrs
	triangles int

	soft  []bool // variable -> its atom is a soft assumption of this Check
	touch []bool // event -> an atom of it is in relax's core

	order []int // the last Sat order, nil otherwise
	cyc   cycleFinder

	// Stats of the last Check, for benchmarks and debugging.
	rounds, learnt int
}

type atomPair struct{ a, b int32 }

// gate is the definition of a variable introduced by And or Or.
type gate struct {
	or      bool
	defined uint8   // 1: the clauses of the positive literal are added; 2: of the negative
	args    []z.Lit // nil: not a gate
}

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
		gates:    []gate{{}},
		seen:     []uint32{0, 0},
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
		s.gates = append(s.gates, gate{})
		s.seen = append(s.seen, 0, 0)
	}
	return v
}

func pairKey(a, b int) uint64 { return uint64(a)<<32 | uint64(uint32(b)) }

func (s *lazy) Before(a, b int) Lit {
	checkEvent("Before", s.n, a)
	checkEvent("Before", s.n, b)
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
	checkEvent("Edge", s.n, a)
	checkEvent("Edge", s.n, b)
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

// Var is a variable with neither an atom nor a gate behind it: define and
// justify treat it as a leaf, decided by the clauses that use it.
func (s *lazy) Var() Lit { return Lit(s.newVar().Pos().Dimacs()) }

func (s *lazy) And(ls ...Lit) Lit {
	switch len(ls) {
	case 0:
		return Lit(s.truth.Dimacs())
	case 1:
		s.lit(ls[0])
		return ls[0]
	}
	return s.gate(false, ls)
}

func (s *lazy) Or(ls ...Lit) Lit {
	switch len(ls) {
	case 0:
		return Lit(s.truth.Not().Dimacs())
	case 1:
		s.lit(ls[0])
		return ls[0]
	}
	return s.gate(true, ls)
}

// gate introduces a variable for the conjunction or disjunction of ls. Its
// clauses wait until a constraint uses it (define).
func (s *lazy) gate(or bool, ls []Lit) Lit {
	t := s.newVar()
	args := make([]z.Lit, len(ls))
	for i, l := range ls {
		args[i] = s.lit(l)
	}
	s.gates[t] = gate{or: or, args: args}
	return Lit(t.Pos().Dimacs())
}

// define adds the clauses by which m, when true, implies its gate's
// definition, and so on down the arguments, once per gate and polarity.
// This is the polarity-aware form of the Tseitin encoding (Plaisted and
// Greenbaum): a gate used only positively needs only t -> definition, so
// the SAT solver is not made to decide gates and atoms that no constraint
// needs; those stay free and justify (below) leaves them out of the order.
func (s *lazy) define(m z.Lit) {
	stack := []z.Lit{m}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g := &s.gates[m.Var()]
		if g.args == nil {
			continue // an atom or a constant
		}
		done := uint8(1)
		if !m.IsPos() {
			done = 2
		}
		if g.defined&done != 0 {
			continue
		}
		g.defined |= done
		// A true And, or a false Or, needs every argument (negated for
		// the Or); a true Or, or a false And, needs one.
		every := g.or != m.IsPos()
		long := []z.Lit{m.Not()}
		for _, a := range g.args {
			if !m.IsPos() {
				a = a.Not()
			}
			if every {
				s.addClause(m.Not(), a)
			} else {
				long = append(long, a)
			}
			stack = append(stack, a)
		}
		if !every {
			s.addClause(long...)
		}
	}
}

func (s *lazy) Assert(l Lit) {
	m := s.lit(l)
	s.addClause(s.asserted.Not(), m)
	s.define(m)
	s.roots = append(s.roots, m)
}

func (s *lazy) Check(assumptions ...Lit) Status {
	s.order = nil
	s.rounds, s.learnt = 0, 0
	start := time.Now()
	var deadline time.Time
	if s.budget.Time > 0 {
		deadline = start.Add(s.budget.Time)
	}
	as := make([]z.Lit, 0, len(assumptions)+1)
	as = append(as, s.asserted)
	for _, l := range assumptions {
		m := s.lit(l)
		s.define(m)
		as = append(as, m)
	}
	if !s.prepareFixed() {
		return Unsat
	}
	soft := s.softAssumptions()
	relaxations := 0
	for {
		if s.budget.Rounds > 0 && s.rounds >= s.budget.Rounds {
			return Unknown
		}
		if s.budget.Time > 0 && time.Since(start) >= s.budget.Time {
			return Unknown
		}
		s.rounds++
		res, ok := s.try(start, as, soft)
		if !ok {
			return Unknown
		}
		switch res {
		case -1:
			if len(soft) == 0 {
				return Unsat
			}
			relaxations++
			soft = s.relax(soft, relaxations >= maxRelaxations)
			continue
		case 0:
			return Unknown
		}
		s.justify(as)
		order, cycles, expired := s.cyc.find(s, s.needed, deadline)
		if order != nil {
			s.order = order
			return Sat
		}
		// The clauses hold in every order: keep them for later Checks
		// even when this one has run out of time.
		for _, c := range cycles {
			s.addClause(c...)
		}
		s.learnt += len(cycles)
		if expired {
			return Unknown
		}
	}
}

// stopSlice is the longest the SAT solver runs, when the budget has a
// Stop channel, before the check looks at it.
const stopSlice = 250 * time.Millisecond

// try runs the SAT solver under the assumptions as and soft, within the
// time left of the check that started at start, and returns its answer
// (1 sat, -1 unsat, 0 out of time); ok is false when the check's time is
// up or its Stop channel is closed. gini's Try can be cut short only by
// its own deadline: with a Stop channel, the solver runs in slices of
// stopSlice, each a new Try under the same assumptions that keeps what
// the earlier ones learnt, with Stop looked at between them.
func (s *lazy) try(start time.Time, as, soft []z.Lit) (res int, ok bool) {
	for {
		if stopped(s.budget.Stop) {
			return 0, false
		}
		// gini's Solve keeps the deadline of an earlier Try, so every
		// call is a Try; "no bound" is a bound nothing reaches.
		left := time.Duration(1<<62 - 1)
		if s.budget.Time > 0 {
			left = s.budget.Time - time.Since(start)
			if left <= 0 {
				return 0, false
			}
		}
		slice := left
		if s.budget.Stop != nil {
			slice = min(left, stopSlice)
		}
		s.sat.Assume(as...)
		s.sat.Assume(soft...)
		if res := s.sat.Try(slice); res != 0 || slice == left {
			return res, true
		}
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
	s.addTriangles()
	return true
}

// addTriangles adds, for every three events whose three pairs are all used
// atoms, the two clauses that forbid the two cyclic orders of the three
// (transitivity, eagerly where it is cheap): most of the cycles lazy
// refinement would otherwise find round after round are such triangles,
// or become triangles once program order is accounted for. It runs over the
// atoms that are new since the last time.
func (s *lazy) addTriangles() {
	if s.n > closureLimit {
		return
	}
	w := (s.n + 63) / 64
	if s.nbrs == nil {
		s.nbrs = make([]uint64, s.n*w)
	}
	for _, v := range s.usedAt[s.triUpTo:] {
		p := s.atomOf[v]
		a, b := int(p.a), int(p.b)
		ra, rb := s.nbrs[a*w:(a+1)*w], s.nbrs[b*w:(b+1)*w]
		ab := v.Pos()
		for k := range w {
			for x := ra[k] & rb[k]; x != 0 && s.triangles < triangleLimit; x &= x - 1 {
				c := k*64 + bits.TrailingZeros64(x)
				ac, bc := s.atomLit(a, c), s.atomLit(b, c)
				s.addClause(ab.Not(), bc.Not(), ac) // not a < b < c < a
				s.addClause(ac.Not(), bc, ab)       // not a < c < b < a
				s.triangles++
			}
		}
		ra[b/64] |= 1 << (b % 64)
		rb[a/64] |= 1 << (a % 64)
	}
	s.triUpTo = len(s.usedAt)
}

// atomLit returns the literal of O(a) < O(b), an existing atom.
func (s *lazy) atomLit(a, b int) z.Lit {
	if a < b {
		return s.atomVar[pairKey(a, b)].Pos()
	}
	return s.atomVar[pairKey(b, a)].Neg()
}

func (s *lazy) Order() []int {
	if s.order == nil {
		return nil
	}
	return append([]int(nil), s.order...)
}

func (s *lazy) Close() error { return nil }

// maxRelaxations bounds the unsatisfiable cores that relax the soft
// assumptions one neighbourhood at a time; after it they all go. Measured
// on 1000-event windows: 8 and 200 took more CPU time than 50.
const maxRelaxations = 50

// softAssumptions returns every used atom in the direction of the events'
// numbering, which is the recorded run's order. Assumed along with the
// check's own assumptions, they keep the SAT solver's models close to the
// recorded run, a solution of everything but the candidate, instead of
// orienting thousands of atoms at random and refining the cycles away round
// after round; relax gives up the ones that the candidate's order
// contradicts. They only steer the search: a model found under them is a
// model, and Unsat is only answered once there are none left.
func (s *lazy) softAssumptions() []z.Lit {
	if len(s.soft) < len(s.atomOf) {
		s.soft = make([]bool, len(s.atomOf))
	}
	if len(s.touch) < s.n {
		s.touch = make([]bool, s.n)
	}
	out := make([]z.Lit, 0, len(s.usedAt))
	for _, v := range s.usedAt {
		out = append(out, v.Pos())
		s.soft[v] = true
	}
	return out
}

// relax drops, after an unsatisfiable solve, the soft assumptions in the
// SAT solver's core and every other one that shares an event with them:
// when the candidate moves an event, all of that event's atoms tend to go
// against the recorded order, and dropping them one core at a time takes
// far more solves. With all, or a core without soft assumptions, it drops
// them all.
func (s *lazy) relax(soft []z.Lit, all bool) []z.Lit {
	clear(s.touch)
	inCore := false
	for _, m := range s.sat.Why(nil) {
		if v := m.Var(); m.IsPos() && int(v) < len(s.soft) && s.soft[v] {
			p := s.atomOf[v]
			s.touch[p.a], s.touch[p.b] = true, true
			inCore = true
		}
	}
	all = all || !inCore
	kept := soft[:0]
	for _, m := range soft {
		p := s.atomOf[m.Var()]
		if !all && !s.touch[p.a] && !s.touch[p.b] {
			kept = append(kept, m)
		} else {
			s.soft[m.Var()] = false
		}
	}
	return kept
}

// justify collects in s.needed the atom literals that the current model
// needs to make the asserted literals and the assumptions true: all the
// arguments of a true And (or a false Or), one true argument of a true Or
// (or one false argument of a false And). The model's other atoms are left
// out of the order: any orientation of them keeps the constraints true, so
// they cannot be part of a cycle that matters. This keeps spurious cycles
// through atoms of unchosen alternatives (a read's other writes) out of
// the refinement.
func (s *lazy) justify(assumptions []z.Lit) {
	s.pass++
	if s.pass == 0 { // wrapped: forget every mark
		clear(s.seen)
		s.pass = 1
	}
	s.needed = s.needed[:0]
	stack := append(append([]z.Lit(nil), s.roots...), assumptions...)
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s.seen[m] == s.pass {
			continue
		}
		s.seen[m] = s.pass
		v := m.Var()
		if p := s.atomOf[v]; p.a != p.b {
			s.needed = append(s.needed, m)
			continue
		}
		g := s.gates[v]
		if g.args == nil {
			continue // the constant
		}
		// A positive literal of an Or, or a negative one of an And, needs
		// one argument (negated for the And); the others need all.
		one := g.or == m.IsPos()
		if !one {
			for _, a := range g.args {
				if !m.IsPos() {
					a = a.Not()
				}
				stack = append(stack, a)
			}
			continue
		}
		pick := z.LitNull
		for _, a := range g.args {
			if !m.IsPos() {
				a = a.Not()
			}
			if !s.sat.Value(a) {
				continue
			}
			if s.seen[a] == s.pass {
				pick = z.LitNull // already justified
				break
			}
			if pick == z.LitNull {
				pick = a
			}
		}
		if pick != z.LitNull {
			stack = append(stack, pick)
		}
	}
}
