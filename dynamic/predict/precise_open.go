package predict

import (
	"fmt"
	"time"

	"github.com/avcheck/avcheck/dynamic/solve"
)

// OpenSolver opens the named engine ("" means gini, the pure-Go default)
// for n events.
func OpenSolver(name string, n int, b solve.Budget) (solve.Solver, error) {
	switch name {
	case "", "gini":
		return solve.New(n, b), nil
	case "z3", "cvc5":
		return solve.NewExternal(name, n, b)
	}
	return nil, fmt.Errorf("unknown solver %q (want gini, z3 or cvc5)", name)
}

// CheckSolver reports whether the named solver can be used, starting and
// closing it once: the commands call it before a run so that a missing
// external solver is one clear error rather than a stage that proves
// nothing.
func CheckSolver(name string) error {
	s, err := OpenSolver(name, 2, solve.Budget{Time: 10 * time.Second})
	if err != nil {
		return err
	}
	s.Edge(0, 1)
	st := s.Check()
	cerr := s.Close()
	if st != solve.Sat {
		return fmt.Errorf("solver %s does not answer a trivial check (%s)", name, st)
	}
	return cerr
}
