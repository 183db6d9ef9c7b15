// Package solve decides ordering constraints over the events of a trace
// window: is there a total order of the events that satisfies a Boolean
// combination of atoms O(a) < O(b)? It is the precise stage's back end
// (dynamic/predict, precise.go): a predicted violation is proven when the
// constraints of a feasible interleaving that exhibits it are satisfiable.
//
// Events are numbered 0..n-1 within one Solver. The atom Before(a, b)
// stands for O(a) < O(b); its negation is O(b) < O(a), since the order is
// total. Edge asserts an order that holds unconditionally (program order,
// happens-before), which engines treat as graph edges rather than clauses.
//
// # Engines
//
// New is the default engine, pure Go: the SAT solver github.com/go-air/gini
// decides the Boolean structure with one variable per atom, and lazy cycle
// elimination supplies transitivity. Each model is justified (only the atoms
// it needs to make the constraints true are kept), the graph of the fixed
// edges and those atoms is sorted topologically, and every cycle in it,
// the shortest through each atom, becomes a clause; the loop is FindAV's
// (seed 002, section VIII) over the integer difference logic of seed 001,
// section 4.2. Triangles of atoms get their transitivity clauses up front.
//
// NewExternal runs z3 or cvc5 as a process and speaks SMT-LIB 2 (QF_IDL)
// to it.
//
// A Budget bounds each Check; when it runs out the answer is Unknown, and
// an external solver's process is killed. docs/solver.md has the details
// and measurements.
package solve

import (
	"fmt"
	"time"
)

// Lit is a literal: an order atom, a variable introduced by And or Or, or
// the negation of either. The zero Lit is not a literal.
type Lit int32

// Not returns the negation of l.
func (l Lit) Not() Lit { return -l }

// Status is the answer of Check.
type Status uint8

// The answers of Check.
const (
	Unknown Status = iota // the budget ran out, or the engine failed
	Sat                   // a total order satisfies the constraints
	Unsat                 // no total order does
)

var statusNames = [...]string{"unknown", "sat", "unsat"}

// String returns "sat", "unsat" or "unknown".
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Budget bounds one Check. A zero field means no bound of that kind.
type Budget struct {
	Rounds int           // refinement rounds (lazy engines) before Unknown
	Time   time.Duration // wall-clock time before Unknown
	// Stop, when closed, ends a Check early with Unknown, within a
	// fraction of a second (an interrupt): the built-in engine gives the
	// SAT solver slices of time and looks at Stop between them, an
	// external solver's process is killed.
	Stop <-chan struct{}
}

// stopped reports whether stop is closed.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// Solver holds the constraints over the events of one window.
type Solver interface {
	// Before returns the atom O(a) < O(b), for a != b in [0, n).
	// Before(b, a) is Before(a, b).Not().
	Before(a, b int) Lit
	// Edge asserts O(a) < O(b) unconditionally.
	Edge(a, b int)
	// Var returns a fresh Boolean variable, constrained only by the
	// constraints that use it.
	Var() Lit
	// And returns a literal equivalent to the conjunction of ls (true for
	// none).
	And(ls ...Lit) Lit
	// Or returns a literal equivalent to the disjunction of ls (false for
	// none).
	Or(ls ...Lit) Lit
	// Assert adds l as a constraint that holds in every later Check.
	Assert(l Lit)
	// Check decides the constraints together with the assumptions, which
	// hold for this Check only.
	Check(assumptions ...Lit) Status
	// Order returns the n events in a total order that satisfies the
	// constraints of the last Check, which must have returned Sat.
	Order() []int
	// Close releases the solver (an external solver's process).
	Close() error
}

// checkEvent panics unless e is an event of a solver of n events: the
// engines' Before and Edge share it, so that a bad event number fails
// alike in each.
func checkEvent(what string, n, e int) {
	if e < 0 || e >= n {
		panic(fmt.Sprintf("solve: %s: event %d out of range [0, %d)", what, e, n))
	}
}
