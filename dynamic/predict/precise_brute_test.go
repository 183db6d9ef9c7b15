package predict

import (
	"github.com/avcheck/avcheck/dynamic/solve"
)

// bruteSolver is a solve.Solver that enumerates every total order of its
// events that respects the edges, and evaluates the constraints on each.
// It is exponential and meant for windows of a dozen events: it is the
// oracle the precise stage's engines are tested against.
type bruteSolver struct {
	n       int
	edges   [][2]int
	gates   []bruteGate
	asserts []solve.Lit
	order   []int
	vars    []int  // the gates of Var
	assign  []bool // per gate, the value of a Var under evaluation
	// limit bounds the orders enumerated; past it Check answers Unknown.
	limit int
}

// A literal of bruteSolver is 1+index into nodes: nodes are atoms and
// gates in one numbering.
type bruteGate struct {
	atom bool
	a, b int // for an atom
	and  bool
	ls   []solve.Lit
	free bool // a variable of Var: its value is in assign
}

func newBruteSolver(n int) *bruteSolver { return &bruteSolver{n: n, limit: 5_000_000} }

func (s *bruteSolver) node(g bruteGate) solve.Lit {
	s.gates = append(s.gates, g)
	return solve.Lit(len(s.gates))
}

func (s *bruteSolver) Before(a, b int) solve.Lit {
	if a == b || a < 0 || b < 0 || a >= s.n || b >= s.n {
		panic("bruteSolver: bad atom")
	}
	if a > b {
		return s.Before(b, a).Not()
	}
	for i, g := range s.gates {
		if g.atom && g.a == a && g.b == b {
			return solve.Lit(i + 1)
		}
	}
	return s.node(bruteGate{atom: true, a: a, b: b})
}

func (s *bruteSolver) Edge(a, b int) { s.edges = append(s.edges, [2]int{a, b}) }
func (s *bruteSolver) Var() solve.Lit {
	s.vars = append(s.vars, len(s.gates))
	return s.node(bruteGate{free: true})
}
func (s *bruteSolver) And(ls ...solve.Lit) solve.Lit { return s.node(bruteGate{and: true, ls: ls}) }
func (s *bruteSolver) Or(ls ...solve.Lit) solve.Lit  { return s.node(bruteGate{ls: ls}) }
func (s *bruteSolver) Assert(l solve.Lit)            { s.asserts = append(s.asserts, l) }
func (s *bruteSolver) Close() error                  { return nil }
func (s *bruteSolver) Order() []int                  { return append([]int(nil), s.order...) }

func (s *bruteSolver) eval(l solve.Lit, pos []int) bool {
	if l < 0 {
		return !s.eval(-l, pos)
	}
	g := &s.gates[l-1]
	if g.atom {
		return pos[g.a] < pos[g.b]
	}
	if g.free {
		return s.assign[l-1]
	}
	for _, x := range g.ls {
		if s.eval(x, pos) != g.and {
			return !g.and
		}
	}
	return g.and
}

func (s *bruteSolver) Check(assumptions ...solve.Lit) solve.Status {
	preds := make([][]int, s.n)
	for _, e := range s.edges {
		preds[e[1]] = append(preds[e[1]], e[0])
	}
	all := append(append([]solve.Lit(nil), s.asserts...), assumptions...)
	pos := make([]int, s.n)
	for i := range pos {
		pos[i] = -1
	}
	var order []int
	count := 0
	var rec func() solve.Status
	rec = func() solve.Status {
		if len(order) == s.n {
			// Every assignment of the variables of Var, with this order.
			s.assign = make([]bool, len(s.gates))
		assign:
			for bits := 0; bits < 1<<len(s.vars); bits++ {
				count++
				if count > s.limit {
					return solve.Unknown
				}
				for k, v := range s.vars {
					s.assign[v] = bits&(1<<k) != 0
				}
				for _, l := range all {
					if !s.eval(l, pos) {
						continue assign
					}
				}
				s.order = append(s.order[:0], order...)
				return solve.Sat
			}
			return solve.Unsat
		}
		unknown := false
	next:
		for v := 0; v < s.n; v++ {
			if pos[v] >= 0 {
				continue
			}
			for _, p := range preds[v] {
				if pos[p] < 0 {
					continue next
				}
			}
			pos[v] = len(order)
			order = append(order, v)
			st := rec()
			order = order[:len(order)-1]
			pos[v] = -1
			switch st {
			case solve.Sat:
				return st
			case solve.Unknown:
				unknown = true
				if count > s.limit {
					return st
				}
			}
		}
		if unknown {
			return solve.Unknown
		}
		return solve.Unsat
	}
	return rec()
}
