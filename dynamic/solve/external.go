package solve

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ownTimeout is the solver's own timeout for a budget: most of it, so that
// the solver usually answers unknown itself before the engine has to kill
// it at the budget.
func ownTimeout(b time.Duration) int64 { return max(1, (b * 9 / 10).Milliseconds()) }

// external speaks SMT-LIB 2 (QF_IDL) to a z3 or cvc5 process: one integer
// O_i per event, one Boolean constant p_k per literal variable, defined by
// (= p_k (< O_a O_b)) for an atom (with O_a and O_b distinct, so that its
// negation is O_b < O_a) and (= p_k (and ...)) or (or ...) for a gate, so
// that check-sat-assuming can take any literal. The process lives as long
// as the Solver; Close ends it and waits for it.
type external struct {
	name   string
	n      int
	budget Budget

	cmd *exec.Cmd
	in  bytes.Buffer // written to the process at the next check

	stdin io.WriteCloser
	lines chan string // the process's output, line by line; closed at EOF

	vars    int // p_1 .. p_vars are declared
	atomVar map[uint64]int
	order   []int
	err     error // the first failure; every later Check is Unknown
}

// NewExternal starts the named external solver, "z3" or "cvc5", found on
// PATH, for n events. b.Time bounds every Check twice over: through the
// solver's own timeout option, set to 90% of it, and by killing the process
// when it has not answered within it; b.Rounds does not apply. A Solver
// whose process failed answers Unknown from then on; Err says why. If the
// program ends without Close, the solver sees its input close and exits
// once it has answered the question it is working on (within its timeout).
func NewExternal(solver string, n int, b Budget) (Solver, error) {
	var args []string
	switch solver {
	case "z3":
		args = []string{"-in", "-smt2"}
	case "cvc5":
		args = []string{"--lang", "smt2", "--incremental", "--produce-models"}
		if b.Time > 0 {
			args = append(args, "--tlimit-per="+strconv.FormatInt(ownTimeout(b.Time), 10))
		}
	default:
		return nil, fmt.Errorf("unknown solver %q (want z3 or cvc5)", solver)
	}
	path, err := exec.LookPath(solver)
	if err != nil {
		return nil, fmt.Errorf("solver %s: not found on PATH (install the Debian package %s): %w", solver, solver, err)
	}
	cmd := exec.Command(path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("solver %s: %w", solver, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("solver %s: %w", solver, err)
	}
	cmd.Stderr = cmd.Stdout // errors are answers too
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("solver %s: %w", solver, err)
	}
	s := &external{
		name:    solver,
		n:       n,
		budget:  b,
		cmd:     cmd,
		stdin:   stdin,
		lines:   make(chan string, 64),
		atomVar: make(map[uint64]int),
	}
	go func() {
		r := bufio.NewScanner(stdout)
		r.Buffer(make([]byte, 1<<16), 1<<30)
		for r.Scan() {
			s.lines <- r.Text()
		}
		close(s.lines)
	}()
	s.printf("(set-option :print-success false)\n")
	if solver == "z3" {
		s.printf("(set-option :produce-models true)\n")
	}
	s.printf("(set-logic QF_IDL)\n")
	for i := range n {
		s.printf("(declare-const O_%d Int)\n", i)
	}
	s.newVar("true") // p_1, the constant of And() and Or()
	return s, nil
}

// Err returns the failure that made s answer Unknown, if any; running out
// of time is not one.
func (s *external) Err() error {
	if errors.Is(s.err, errClosed) || errors.Is(s.err, errTimedOut) || errors.Is(s.err, errStopped) {
		return nil
	}
	return s.err
}

// Err returns why s has failed, if it has: an external solver that died or
// answered with an error, after which its checks are Unknown. Running out
// of budget is not a failure, and the default engine does not fail.
func Err(s Solver) error {
	if f, ok := s.(interface{ Err() error }); ok {
		return f.Err()
	}
	return nil
}

func (s *external) printf(format string, args ...any) {
	if s.err != nil {
		return
	}
	fmt.Fprintf(&s.in, format, args...)
}

// fail records the first failure and stops the process.
func (s *external) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.kill()
}

func (s *external) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.stdin.Close()
	for range s.lines { // drain, so that the reader and Wait finish
	}
	_ = s.cmd.Wait()
	s.cmd = nil
}

// newVar declares the next p_k, defined as def.
func (s *external) newVar(def string) int {
	s.vars++
	s.printf("(declare-const p_%d Bool)\n(assert (= p_%d %s))\n", s.vars, s.vars, def)
	return s.vars
}

func (s *external) Var() Lit {
	s.vars++
	s.printf("(declare-const p_%d Bool)\n", s.vars)
	return Lit(s.vars)
}

func (s *external) term(l Lit) string {
	v := int(l)
	if v < 0 {
		v = -v
	}
	if l == 0 || v > s.vars {
		panic(fmt.Sprintf("solve: %d is not a literal of this solver", l))
	}
	if l < 0 {
		return fmt.Sprintf("(not p_%d)", v)
	}
	return fmt.Sprintf("p_%d", v)
}

func (s *external) Before(a, b int) Lit {
	checkEvent("Before", s.n, a)
	checkEvent("Before", s.n, b)
	if a == b {
		panic(fmt.Sprintf("solve: Before(%d, %d): an event is not before itself", a, b))
	}
	lo, hi := min(a, b), max(a, b)
	v, ok := s.atomVar[pairKey(lo, hi)]
	if !ok {
		v = s.newVar(fmt.Sprintf("(< O_%d O_%d)", lo, hi))
		// The order is total: the negation of the atom is the strict
		// O(b) < O(a), not O(b) <= O(a).
		s.printf("(assert (distinct O_%d O_%d))\n", lo, hi)
		s.atomVar[pairKey(lo, hi)] = v
	}
	if a > b {
		return Lit(-v)
	}
	return Lit(v)
}

func (s *external) Edge(a, b int) {
	checkEvent("Edge", s.n, a)
	checkEvent("Edge", s.n, b)
	s.printf("(assert (< O_%d O_%d))\n", a, b)
}

func (s *external) gate(op string, ls []Lit) Lit {
	var sb strings.Builder
	sb.WriteString("(" + op)
	for _, l := range ls {
		sb.WriteString(" " + s.term(l))
	}
	sb.WriteString(")")
	return Lit(s.newVar(sb.String()))
}

func (s *external) And(ls ...Lit) Lit {
	switch len(ls) {
	case 0:
		return 1
	case 1:
		s.term(ls[0])
		return ls[0]
	}
	return s.gate("and", ls)
}

func (s *external) Or(ls ...Lit) Lit {
	switch len(ls) {
	case 0:
		return -1
	case 1:
		s.term(ls[0])
		return ls[0]
	}
	return s.gate("or", ls)
}

func (s *external) Assert(l Lit) {
	s.printf("(assert %s)\n", s.term(l))
}

// flush writes out what is buffered (constraints are buffered until a
// check, so that a solver that stops reading cannot block building them).
// It returns errTimedOut when the deadline (if not nil) passes first, or
// errStopped when the budget's Stop is closed, having killed the process,
// which ends the write.
func (s *external) flush(deadline *time.Timer) error {
	if s.err != nil {
		return s.err
	}
	write := func() error {
		_, err := s.stdin.Write(s.in.Bytes())
		s.in.Reset()
		return err
	}
	if deadline == nil && s.budget.Stop == nil {
		if err := write(); err != nil {
			return fmt.Errorf("solver %s: writing: %w", s.name, err)
		}
		return nil
	}
	var expired <-chan time.Time
	if deadline != nil {
		expired = deadline.C
	}
	var err error
	done := make(chan struct{})
	go func() { err = write(); close(done) }()
	select {
	case <-done:
		if err != nil {
			return fmt.Errorf("solver %s: writing: %w", s.name, err)
		}
		return nil
	case <-expired:
		s.kill()
		<-done // the write ends with the process
		return errTimedOut
	case <-s.budget.Stop:
		s.kill()
		<-done
		return errStopped
	}
}

// stopGrace is how long a solver that ended waits for an interrupt that
// may have ended it to reach avcheck too.
const stopGrace = time.Second

// next returns the next line of output; errTimedOut when the deadline
// (if not nil) has passed, errStopped when the budget's Stop is closed
// (having killed the process), another error when the process has ended.
func (s *external) next(deadline *time.Timer) (string, error) {
	var expired <-chan time.Time
	if deadline != nil {
		expired = deadline.C
	}
	select {
	case l, ok := <-s.lines:
		if !ok {
			// A Ctrl-C reaches the solver, in avcheck's process group,
			// as it reaches avcheck: the solver can end before
			// avcheck's own handler has closed Stop.
			if s.budget.Stop != nil {
				select {
				case <-s.budget.Stop:
					return "", errStopped
				case <-time.After(stopGrace):
				}
			}
			return "", fmt.Errorf("solver %s: the process ended", s.name)
		}
		return l, nil
	case <-expired:
		return "", errTimedOut
	case <-s.budget.Stop:
		s.kill()
		return "", errStopped
	}
}

func (s *external) Check(assumptions ...Lit) Status {
	start := time.Now()
	s.order = nil
	if s.err != nil || stopped(s.budget.Stop) {
		return Unknown
	}
	var sb strings.Builder
	for _, l := range assumptions {
		sb.WriteString(" " + s.term(l))
	}
	if s.budget.Time > 0 && s.name == "z3" {
		s.printf("(set-option :timeout %d)\n", ownTimeout(s.budget.Time))
	}
	if len(assumptions) == 0 {
		s.printf("(check-sat)\n") // cvc5 rejects an empty check-sat-assuming
	} else {
		s.printf("(check-sat-assuming (%s))\n", sb.String())
	}
	var timer *time.Timer
	if s.budget.Time > 0 {
		timer = time.NewTimer(time.Until(start.Add(s.budget.Time)))
		defer timer.Stop()
	}
	// The solver reads the constraints as they are written, and may
	// still be reading when the check begins: the flush is bounded too.
	if err := s.flush(timer); err != nil {
		s.fail(err)
		return Unknown
	}
	for {
		line, err := s.next(timer)
		if err != nil {
			// Out of time, the process is stopped too: it may still be
			// working on the question. That is Unknown, not an error.
			s.fail(err)
			return Unknown
		}
		switch strings.TrimSpace(line) {
		case "sat":
			if err := s.readOrder(timer); err != nil {
				s.fail(err)
				return Unknown
			}
			return Sat
		case "unsat":
			return Unsat
		case "unknown", "timeout":
			return Unknown
		case "":
			continue
		}
		s.fail(fmt.Errorf("solver %s: %s", s.name, strings.TrimSpace(line)))
		return Unknown
	}
}

// readOrder asks for the values of the order variables and sorts the
// events by them (ties, between events no constraint relates, by number).
func (s *external) readOrder(timer *time.Timer) error {
	var sb strings.Builder
	sb.WriteString("(get-value (")
	for i := range s.n {
		fmt.Fprintf(&sb, " O_%d", i)
	}
	sb.WriteString("))\n")
	s.printf("%s", sb.String())
	if err := s.flush(timer); err != nil {
		return err
	}
	// The answer is one s-expression, ((O_0 v) (O_1 (- v)) ...), maybe
	// over several lines.
	var answer strings.Builder
	depth := 0
	for started := false; !started || depth > 0; {
		line, err := s.next(timer)
		if err != nil {
			return err
		}
		if strings.HasPrefix(strings.TrimSpace(line), "(error") {
			return fmt.Errorf("solver %s: %s", s.name, strings.TrimSpace(line))
		}
		for _, c := range line {
			switch c {
			case '(':
				depth++
				started = true
			case ')':
				depth--
			}
		}
		answer.WriteString(line + " ")
	}
	vals, err := parseValues(answer.String(), s.n)
	if err != nil {
		return fmt.Errorf("solver %s: get-value: %w", s.name, err)
	}
	order := make([]int, s.n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(vals[a], vals[b]) })
	s.order = order
	return nil
}

// parseValues reads ((O_i v) ...) where v is a numeral or (- numeral).
func parseValues(s string, n int) ([]int64, error) {
	r := strings.NewReplacer("(", " ( ", ")", " ) ")
	toks := strings.Fields(r.Replace(s))
	vals := make([]int64, n)
	have := make([]bool, n)
	for i := 0; i < len(toks); i++ {
		name, ok := strings.CutPrefix(toks[i], "O_")
		if !ok {
			continue
		}
		e, err := strconv.Atoi(name)
		if err != nil || e < 0 || e >= n {
			return nil, fmt.Errorf("unexpected variable %q", toks[i])
		}
		neg := false
		j := i + 1
		if j+1 < len(toks) && toks[j] == "(" && toks[j+1] == "-" {
			neg = true
			j += 2
		}
		if j >= len(toks) {
			return nil, errors.New("truncated answer")
		}
		v, err := strconv.ParseInt(toks[j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("value of %s: %q is not an integer", toks[i], toks[j])
		}
		if neg {
			v = -v
		}
		vals[e], have[e] = v, true
		i = j
	}
	for e, ok := range have {
		if !ok {
			return nil, fmt.Errorf("no value for O_%d", e)
		}
	}
	return vals, nil
}

func (s *external) Order() []int {
	if s.order == nil {
		return nil
	}
	return append([]int(nil), s.order...)
}

// Close ends the process: it asks it to exit and kills it if it has not
// within a second. It returns the failure that stopped the solver, if any.
func (s *external) Close() error {
	if s.cmd != nil {
		s.in.Reset() // constraints no check will use
		s.printf("(exit)\n")
		go func(b []byte, w io.WriteCloser) {
			_, _ = w.Write(b) // ends when the process reads it or is killed
			_ = w.Close()
		}(s.in.Bytes(), s.stdin)
		done := make(chan struct{})
		cmd := s.cmd
		go func() {
			for range s.lines {
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
		s.cmd = nil
	}
	err := s.err
	s.err = errClosed
	if errors.Is(err, errClosed) || errors.Is(err, errTimedOut) || errors.Is(err, errStopped) {
		return nil
	}
	return err
}

var (
	errClosed   = errors.New("solver closed")
	errTimedOut = errors.New("out of time; the process was stopped")
	errStopped  = errors.New("stopped (Budget.Stop); the process was stopped")
)
