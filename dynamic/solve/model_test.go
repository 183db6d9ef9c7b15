package solve

import (
	"fmt"
	"math/rand/v2"
)

// formula records what is asserted through a Solver so that tests can
// evaluate the constraints on an order independently of any engine.
type formula struct {
	Solver
	n        int
	atoms    map[Lit][2]int // literal returned by Before(a, b) -> (a, b)
	defs     map[Lit]node   // literal returned by And/Or -> its definition
	edges    [][2]int
	asserted []Lit
}

type node struct {
	or   bool
	args []Lit
}

func record(s Solver, n int) *formula {
	return &formula{Solver: s, n: n, atoms: map[Lit][2]int{}, defs: map[Lit]node{}}
}

func (f *formula) Before(a, b int) Lit {
	l := f.Solver.Before(a, b)
	f.atoms[l] = [2]int{a, b}
	return l
}

func (f *formula) Edge(a, b int) {
	f.Solver.Edge(a, b)
	f.edges = append(f.edges, [2]int{a, b})
}

func (f *formula) And(ls ...Lit) Lit {
	l := f.Solver.And(ls...)
	if _, ok := f.defs[l]; !ok && (len(ls) != 1 || l != ls[0]) {
		f.defs[l] = node{args: append([]Lit(nil), ls...)}
	}
	return l
}

func (f *formula) Or(ls ...Lit) Lit {
	l := f.Solver.Or(ls...)
	if _, ok := f.defs[l]; !ok && (len(ls) != 1 || l != ls[0]) {
		f.defs[l] = node{or: true, args: append([]Lit(nil), ls...)}
	}
	return l
}

func (f *formula) Assert(l Lit) {
	f.Solver.Assert(l)
	f.asserted = append(f.asserted, l)
}

// eval evaluates l with pos[e] the position of event e in an order.
func (f *formula) eval(l Lit, pos []int) bool {
	if ab, ok := f.atoms[l]; ok {
		return pos[ab[0]] < pos[ab[1]]
	}
	if d, ok := f.defs[l]; ok {
		for _, m := range d.args {
			if f.eval(m, pos) == d.or {
				return d.or
			}
		}
		return !d.or
	}
	if _, ok := f.atoms[l.Not()]; ok {
		return !f.eval(l.Not(), pos)
	}
	if _, ok := f.defs[l.Not()]; ok {
		return !f.eval(l.Not(), pos)
	}
	panic(fmt.Sprintf("literal %d was not built through the recorder", l))
}

// satisfies reports whether the order (a sequence of events) is a
// permutation of the n events that respects every edge and makes every
// asserted literal and assumption true; the reason when not.
func (f *formula) satisfies(order []int, assumptions []Lit) error {
	if len(order) != f.n {
		return fmt.Errorf("order has %d events, want %d", len(order), f.n)
	}
	pos := make([]int, f.n)
	for i := range pos {
		pos[i] = -1
	}
	for i, e := range order {
		if e < 0 || e >= f.n || pos[e] >= 0 {
			return fmt.Errorf("order %v is not a permutation", order)
		}
		pos[e] = i
	}
	for _, e := range f.edges {
		if pos[e[0]] >= pos[e[1]] {
			return fmt.Errorf("order %v breaks edge %d->%d", order, e[0], e[1])
		}
	}
	for _, l := range append(append([]Lit(nil), f.asserted...), assumptions...) {
		if !f.eval(l, pos) {
			return fmt.Errorf("order %v falsifies literal %d", order, l)
		}
	}
	return nil
}

// bruteForce decides the constraints by trying every permutation.
func (f *formula) bruteForce(assumptions []Lit) Status {
	perm := make([]int, f.n)
	for i := range perm {
		perm[i] = i
	}
	var try func(k int) bool
	try = func(k int) bool {
		if k == len(perm) {
			return f.satisfies(perm, assumptions) == nil
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			if try(k + 1) {
				return true
			}
			perm[k], perm[i] = perm[i], perm[k]
		}
		return false
	}
	if try(0) {
		return Sat
	}
	return Unsat
}

// randomInstance asserts random constraints over n events on s: a few
// forward edges and a few asserted Or/And combinations of atoms. It returns
// random assumption sets to check in turn.
func randomInstance(r *rand.Rand, s Solver, n int) [][]Lit {
	for range r.IntN(n) {
		a, b := r.IntN(n), r.IntN(n)
		if a < b {
			s.Edge(a, b)
		}
	}
	atom := func() Lit {
		a := r.IntN(n)
		b := (a + 1 + r.IntN(n-1)) % n
		return s.Before(a, b)
	}
	var term func(depth int) Lit
	term = func(depth int) Lit {
		if depth == 0 || r.IntN(3) == 0 {
			l := atom()
			if r.IntN(4) == 0 {
				l = l.Not()
			}
			return l
		}
		args := make([]Lit, 1+r.IntN(3))
		for i := range args {
			args[i] = term(depth - 1)
		}
		var l Lit
		if r.IntN(2) == 0 {
			l = s.And(args...)
		} else {
			l = s.Or(args...)
		}
		if r.IntN(5) == 0 {
			l = l.Not()
		}
		return l
	}
	for range 1 + r.IntN(n) {
		s.Assert(term(2))
	}
	var checks [][]Lit
	for range 3 {
		var as []Lit
		for range r.IntN(3) {
			as = append(as, term(1))
		}
		checks = append(checks, as)
	}
	return checks
}
