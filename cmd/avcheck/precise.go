package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/solve"
)

// preciseFlags are the precise stage's flags, shared by avcheck predict
// and avcheck run.
type preciseFlags struct {
	on     bool
	solver string
	window int
	budget time.Duration
}

func (p *preciseFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&p.on, "precise", true, "prove each finding with a solver over the recorded values (level proven, with a witness) or drop it as infeasible; -precise=false keeps the cheaper stages' levels")
	fs.StringVar(&p.solver, "solver", "gini", "the precise stage's `engine`: gini (built in), z3 or cvc5 (an installed solver on PATH)")
	fs.IntVar(&p.window, "window", predict.DefaultWindow, "how many trace `events` around a finding the precise stage reorders")
	fs.DurationVar(&p.budget, "budget", predict.DefaultStageTime, "time `limit` of deciding the possible violations, the precise stage's checks (each at most "+predict.DefaultPreciseTime.String()+") and the witness searches together; the findings not checked or not searched by then keep their level, with a note saying so")
}

// check validates the flags: a usage error (exit 2) for a bad value, an
// error (exit 1) for a solver that cannot be started.
func (p *preciseFlags) check() (code int, err error) {
	switch p.solver {
	case "gini", "z3", "cvc5":
	default:
		return exitUsage, fmt.Errorf("unknown solver %q (want gini, z3 or cvc5)", p.solver)
	}
	if p.window < 1 {
		return exitUsage, fmt.Errorf("-window %d: want a positive number of events", p.window)
	}
	if p.budget <= 0 {
		return exitUsage, fmt.Errorf("-budget %v: want a positive duration", p.budget)
	}
	if p.on && p.solver != "gini" {
		if err := predict.CheckSolver(p.solver); err != nil {
			return exitError, err
		}
	}
	return 0, nil
}

// apply sets the precise stage's options.
func (p *preciseFlags) apply(o *predict.Options) {
	o.Precise = p.on
	o.Solver = p.solver
	o.Window = p.window
	o.Budget = solve.Budget{Time: min(p.budget, predict.DefaultPreciseTime)}
	o.StageTime = p.budget
}

// warnPrecise prints what deciding the possible violations could not do:
// a solver that failed, a model the witness validator rejected (a bug of
// avcheck's, which leaves the finding at its previous level), and the
// checks and witness searches that the time (-budget) left undone.
func warnPrecise(w io.Writer, cmd string, res *predict.Result) {
	if st := res.Precise; st != nil {
		for _, e := range st.Errors {
			fmt.Fprintf(w, "%s: precise stage: %s\n", cmd, e)
		}
		if st.Skipped > 0 {
			fmt.Fprintf(w, "%s: precise stage: its time (-budget) ran out before it checked %s; those reported keep their level, with a note\n", cmd, plural(st.Skipped, "possible violation"))
		}
		for _, e := range st.Rejected {
			fmt.Fprintf(w, "%s: precise stage (a bug, please report it): %s\n", cmd, e)
		}
	}
	if res.Unwitnessed > 0 {
		fmt.Fprintf(w, "%s: its time (-budget) ran out before it searched a witness schedule for %s; those are reported at their level without one, with a note\n", cmd, plural(res.Unwitnessed, "finding"))
	}
}
