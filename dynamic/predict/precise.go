package predict

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/avcheck/avcheck/dynamic/solve"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file is the precise stage: it decides, with a solver
// (dynamic/solve), whether some feasible interleaving of a window of the
// recorded run exhibits a predicted finding. It follows the symbolic
// encoding of Fusion (Wang et al., shared/seeds/001_af4533d3de4635d8.txt,
// section 4) in the maximal-causal style of section 1 (Fig. 2): the events
// keep the values the run recorded, and an interleaving is feasible when
// every read whose value matters reads a write of the value it recorded.
// Only the prefix up to the violation has to be feasible (section 5,
// erroneous prefixes). A satisfiable encoding proves the finding and its
// model is the witness; an unsatisfiable one (under the approximation
// below that refutes, over the whole trace) shows that no interleaving
// exhibits it with the recorded values, which is how the over-approximate
// predictions of seed 001 Fig. 1 and seed 000 Figs. 2 and 6 go away
// (FindAV in Ganai, shared/seeds/002_42168b820bf119f6.txt, section VI, is
// the same check against a solver).
//
// The encoding of one check, over the events of the window [from, to) of
// the trace (the events before from run as recorded, as a witness's
// WitnessFrom says), with O(e) the position of e in the interleaving:
//
//   - program order, and the happens-before edges that do not depend on
//     data (hb.go): fork before the child's first event, send k before
//     receive k, receive k-cap before the send of message k completes (the
//     sender's next event), close before a receive that saw the channel
//     closed, the Once.Do that ran the function before the others, every
//     Cond notification recorded before a woken Wait before it, and
//     sends, receives, WaitGroup operations around a Wait and conflicting
//     sync/atomic operations on one address in their recorded order (so
//     each receive gets the message, each Wait the counter, each atomic
//     load the store it recorded: conservative, never an edge the run did
//     not have);
//   - lock mutual exclusion: two critical sections of one lock in
//     different goroutines do not overlap within the prefix, O(rel1) <
//     O(acq2) or O(rel2) < O(acq1) or one of them starts after the
//     violation; a section held when the window starts, or not released
//     within the window, is open at that end; RWMutex read sections share;
//   - read-from consistency (the pi-functions of section 4.2, with the
//     recorded values instead of symbolic ones): a read whose value
//     matters reads a write of the value it recorded (or, if it carries a
//     range, of a value in its range), and that write wrote its recorded
//     value because its own goroutine's reads did (precise_values.go);
//   - the finding: O(e1) < O(f) < O(e2) as assumptions, the last access
//     last (every event after it is outside the prefix and unconstrained,
//     section 5), and for a race the two accesses back to back.
//
// Which reads matter is approximated from the trace, which records values
// and branch counts, not expressions. Two approximations bracket the
// truth, one for each answer:
//
//   - to prove a finding (precise_values.go): a read matters when a later
//     event of its goroutine in the prefix comes after a taken conditional
//     branch (Event.Branches, the guard g(t) of section 4.2: the branch
//     may test the value), and it must then read its recorded value, or
//     a value of its range; every memory access of the prefix but the
//     violation's last, every event that passes a value to another
//     goroutine, and every event another goroutine of the prefix waits
//     for (a receive, a close, WaitGroup.Done, a Cond notification, the
//     Once.Do that ran), needs the reads of its goroutine before it to
//     have done so, since its address, value or object may have been
//     computed from them; a write's value is known only if it wrote its
//     recorded one. Satisfiable then proves it;
//   - to show it infeasible, a read matters only when such a branch
//     guards a later event of the prefix, as AVFilter assumes (seed 000,
//     section 3.3), or when its value is the address one of the
//     finding's accesses goes through (addressUsers in
//     precise_values.go); it may read a write whose value is not known, or one
//     of a value in its range; a write's value counts as known only if
//     its goroutine took in no value earlier in the window (otherwise it
//     may be anything), and a read after a store at a varying index
//     (trace.AddrVaries) whose goroutine read earlier may see anything.
//     Only if that is unsatisfiable too is the finding dropped.
//
// In between the finding keeps its level. The lost update of a counter
// whose second increment read the first one's value is proven, not
// dropped: moved before the first increment's write, the read sees
// another value, but only the violation's own write depends on it. A
// withdrawal whose loop tests the balance it read is proven too when the
// recorder gave that read a range: any balance in it takes the loop the
// same way, so the read may see the balance from before a deposit.
//
// Unsatisfiable means: no interleaving exhibits the finding in which the
// reads that matter read the values they read in the run, or values of
// their ranges. A real violation that needs a read to see a value outside
// its range (or any other value, where the recorder could not give the
// read a range) is beyond the trace: the values and ranges are all the
// precise stage knows of the program.

// Precise stage defaults.
const (
	// DefaultWindow is the number of trace events around a finding that
	// the precise stage reorders.
	DefaultWindow = 1000
	// DefaultPreciseTime is the time budget of one check.
	DefaultPreciseTime = 10 * time.Second
	// DefaultStageTime is the time avcheck's commands give the whole
	// precise stage (Options.StageTime).
	DefaultStageTime = 30 * time.Second
	// maxSpanFactor bounds how far a finding's events may spread beyond
	// the window before the check gives up: the window always holds all
	// of them.
	maxSpanFactor = 8
	// wholeFactor bounds, in windows, the traces whose whole length an
	// unsatisfiable window is checked again over.
	wholeFactor = 4
	// maxEncoding bounds the literals of one encoding (preciseStage's
	// maxSize); past it the check answers unknown rather than exhaust
	// memory.
	maxEncoding = 4 << 20
)

// PreciseStats counts what the precise stage decided in one Predict.
type PreciseStats struct {
	Checks     int           // solver checks run (one per instance tried)
	Proven     int           // findings proven
	Infeasible int           // findings dropped as infeasible
	Unknown    int           // findings left at their level (budget, window, solver error)
	Skipped    int           // candidates not checked: the stage's time (Options.StageTime) had run out
	Time       time.Duration // total time of the checks, encoding included, summed over the workers that run them side by side
	// Rejected lists, for each satisfiable check whose model the witness
	// validator rejected, why: that is a bug of the encoding or of the
	// solver, and the finding keeps its previous level.
	Rejected []string
	// Errors lists solver failures (an external solver that cannot be
	// started, for example), once each.
	Errors []string
}

// solverFactory opens a solver for n events.
type solverFactory func(n int, b solve.Budget) (solve.Solver, error)

// preciseStage holds what the checks of one trace share.
type preciseStage struct {
	t      *trace.Trace
	m      *syncMeta
	p      *prefixState
	window int
	budget solve.Budget
	open   solverFactory
	vals   *valueTable
	stats  *PreciseStats
	errs   map[string]bool
	// maxSize bounds the literals of one encoding: maxEncoding, or less
	// in tests.
	maxSize int
	// deadline ends the current check; zero for none.
	deadline time.Time
	// stageEnd ends the whole stage (Options.StageTime); zero for none.
	stageEnd time.Time
	// valsOnce, if not nil, builds vals once for the stages that decide
	// one trace's candidates side by side.
	valsOnce *valueTableOnce
}

// valueTableOnce is a valueTable built by the first stage that needs it.
type valueTableOnce struct {
	once sync.Once
	vt   *valueTable
}

// get returns the table of t: built once if o is not nil, else anew.
func (o *valueTableOnce) get(t *trace.Trace) *valueTable {
	if o == nil {
		return buildValueTable(t)
	}
	o.once.Do(func() { o.vt = buildValueTable(t) })
	return o.vt
}

// add adds what one candidate's checks counted to s, in candidate order:
// an error string already in seen is left out, as decide leaves out one
// it has met before.
func (s *PreciseStats) add(c *PreciseStats, seen map[string]bool) {
	s.Checks += c.Checks
	s.Proven += c.Proven
	s.Infeasible += c.Infeasible
	s.Unknown += c.Unknown
	s.Skipped += c.Skipped
	s.Time += c.Time
	for _, e := range c.Rejected {
		if !seen[e] {
			seen[e] = true
			s.Rejected = append(s.Rejected, e)
		}
	}
	for _, e := range c.Errors {
		if !seen[e] {
			seen[e] = true
			s.Errors = append(s.Errors, e)
		}
	}
}

func newPreciseStage(t *trace.Trace, m *syncMeta, p *prefixState, opts *Options) *preciseStage {
	ps := &preciseStage{t: t, m: m, p: p, window: opts.Window, budget: opts.Budget, open: opts.newSolver, stats: &PreciseStats{}, errs: map[string]bool{}, maxSize: maxEncoding}
	if ps.window <= 0 {
		ps.window = DefaultWindow
	}
	if ps.budget == (solve.Budget{}) {
		ps.budget.Time = DefaultPreciseTime
	}
	if ps.open == nil {
		name := opts.Solver
		ps.open = func(n int, b solve.Budget) (solve.Solver, error) { return OpenSolver(name, n, b) }
	}
	return ps
}

// preciseVerdict is the outcome of the precise stage for one finding.
type preciseVerdict uint8

const (
	verdictUnknown    preciseVerdict = iota // the finding keeps its level
	verdictProven                           // the finding is proven, with a witness
	verdictInfeasible                       // the finding is dropped
)

// decide checks the finding's instances in turn. The first feasible one
// proves it: f gets LevelProven, that instance's accesses and the model's
// order as its witness. If every instance is infeasible, f.Dropped says
// so. Otherwise f is unchanged.
func (ps *preciseStage) decide(f *Finding, reps [][]uint32) preciseVerdict {
	start := time.Now()
	defer func() { ps.stats.Time += time.Since(start) }()
	if ps.outOfTime(start) {
		return ps.skip(f)
	}
	race := f.Kind == KindRace
	infeasible := 0
	var win [2]uint32
	why := "" // why the first undecided check was
	for _, rep := range reps {
		orders := [][]uint32{rep}
		if race {
			// A race is the same whichever access runs first.
			orders = append(orders, []uint32{rep[1], rep[0]})
		}
		repInfeasible := true
		for _, targets := range orders {
			if stopped(ps.budget.Stop) {
				return verdictUnknown // the caller drops the finding undecided
			}
			if ps.outOfTime(time.Now()) {
				return ps.skip(f)
			}
			ps.stats.Checks++
			res := ps.check(targets, race)
			switch res.status {
			case solve.Sat:
				setAccesses(ps.t, f, targets)
				if race {
					f.Pattern = opLetter(ps.t.Events[targets[0]].Kind.IsWrite()) + "-" + opLetter(ps.t.Events[targets[1]].Kind.IsWrite())
				}
				f.Level = LevelProven
				f.Dropped = ""
				f.WitnessFrom = ps.t.Events[res.witnessFrom].Seq
				f.Witness = make([]uint64, len(res.sched))
				for i, e := range res.sched {
					f.Witness[i] = ps.t.Events[e].Seq
				}
				ps.stats.Proven++
				return verdictProven
			case solve.Unsat:
				win = [2]uint32{res.from, res.to}
			default:
				repInfeasible = false
				if why == "" {
					why = res.undecided
				}
				if res.err != "" && !ps.errs[res.err] {
					ps.errs[res.err] = true
					if res.rejected {
						ps.stats.Rejected = append(ps.stats.Rejected, res.err)
					} else {
						ps.stats.Errors = append(ps.stats.Errors, res.err)
					}
				}
			}
		}
		if repInfeasible {
			infeasible++
		}
	}
	if infeasible == len(reps) && infeasible > 0 {
		setAccesses(ps.t, f, reps[0])
		what := "it"
		if len(reps) > 1 {
			what = fmt.Sprintf("any of its %d closest instances", len(reps))
		}
		f.Dropped = fmt.Sprintf("infeasible: no interleaving of events %d-%d exhibits %s in which the reads a later branch may test see the values they recorded (precise stage)",
			ps.t.Events[win[0]].Seq, ps.t.Events[win[1]-1].Seq, what)
		ps.stats.Infeasible++
		return verdictInfeasible
	}
	if ps.outOfTime(time.Now()) {
		return ps.skip(f) // a check was cut short by the stage's end
	}
	if why != "" && f.Note == "" {
		f.Note = "not decided by the precise stage: " + why
	}
	ps.stats.Unknown++
	return verdictUnknown
}

// outOfTime reports whether the stage's time has run out at now.
func (ps *preciseStage) outOfTime(now time.Time) bool {
	return !ps.stageEnd.IsZero() && !now.Before(ps.stageEnd)
}

// skip leaves f at its level, noting that the stage's time ran out before
// it could be decided.
func (ps *preciseStage) skip(f *Finding) preciseVerdict {
	f.Note = skippedNote
	ps.stats.Skipped++
	return verdictUnknown
}

// skippedNote is the note of a finding the precise stage did not check.
const skippedNote = "not checked by the precise stage, whose time ran out (-budget)"

// checkResult is the answer of one check.
type checkResult struct {
	status   solve.Status
	from, to uint32   // the window
	sched    []uint32 // for Sat: the witness, validated
	// witnessFrom is where sched departs from the trace's order: it runs
	// the events before it as recorded.
	witnessFrom uint32
	err         string // for Unknown: why, if not the budget
	rejected    bool   // err is the validator's rejection of a model
	// undecided, for Unknown, says why in words for the finding's note.
	undecided string
}

// check decides whether an interleaving of the window around targets runs
// them in order, the last one last (back to back if adjacent).
//
// A satisfiable window proves the finding: the events before it run as
// recorded. An unsatisfiable one does not show it infeasible unless the
// window is the whole trace, since an interleaving may need to reorder
// events before the window or run events after it; so an unsatisfiable
// window is checked again over the whole trace if that is at most
// wholeFactor windows long, and is undecided otherwise.
func (ps *preciseStage) check(targets []uint32, adjacent bool) checkResult {
	from, to, ok := ps.windowOf(targets)
	if !ok {
		return checkResult{status: solve.Unknown, err: fmt.Sprintf("a finding spans more than %d times the window of %d events", maxSpanFactor, ps.window),
			undecided: fmt.Sprintf("its accesses are more than %d windows of %d events apart (-window)", maxSpanFactor, ps.window)}
	}
	// One deadline covers the check's solver calls (the window, its
	// relaxed form, the whole trace), so that it never runs past the
	// budget.
	ps.deadline = ps.stageEnd
	if ps.budget.Time > 0 {
		if d := time.Now().Add(ps.budget.Time); ps.deadline.IsZero() || d.Before(ps.deadline) {
			ps.deadline = d
		}
	}
	n := len(ps.t.Events)
	whole := from == 0 && int(to) == n
	// An unsatisfiable window decides nothing when the trace is too long
	// to be checked whole: then the window's relaxed form, which can only
	// confirm that answer, is not solved.
	res := ps.checkWindow(from, to, targets, adjacent, whole || n <= wholeFactor*ps.window)
	if res.status != solve.Unsat || whole {
		return res
	}
	if n > wholeFactor*ps.window {
		res.status = solve.Unknown
		res.undecided = fmt.Sprintf("no interleaving of events %d-%d shows it with the events before them run as recorded, but the trace (%d events) is too long to check whole",
			ps.t.Events[from].Seq, ps.t.Events[to-1].Seq, n)
		return res
	}
	return ps.checkWindow(0, uint32(n), targets, adjacent, true)
}

// checkWindow is check over the window [from, to). Unless refute, an
// answer unsatisfiable under the approximation that proves is not checked
// under the one that refutes: the caller can make nothing of it.
func (ps *preciseStage) checkWindow(from, to uint32, targets []uint32, adjacent, refute bool) checkResult {
	res := checkResult{from: from, to: to}
	enc, status, err := ps.solve(from, to, targets, adjacent, false)
	if err == nil && status == solve.Unsat && enc.uncertain && refute {
		// Unsatisfiable under the approximation that proves: the finding
		// is infeasible if it stays so under the one that refutes (see
		// the top of this file), and undecided otherwise.
		enc.close()
		var relaxed *encoding
		relaxed, status, err = ps.solve(from, to, targets, adjacent, true)
		if relaxed != nil {
			relaxed.close()
		}
		if status == solve.Sat {
			status = solve.Unknown
			res.undecided = "no interleaving shows it in which the reads see the values recorded, but one does if values the trace did not record were others"
		}
		res.status = status
		if err != nil {
			res.status, res.err = solve.Unknown, failure(err)
			res.undecided = undecided(err)
		}
		return res
	}
	if err != nil {
		if enc != nil {
			enc.close()
		}
		res.status = solve.Unknown
		res.err = failure(err)
		res.undecided = undecided(err)
		return res
	}
	defer enc.close()
	res.status = status
	if res.status == solve.Unknown {
		res.undecided = outOfTimeNote
	}
	if res.status != solve.Sat {
		return res
	}
	order := enc.s.Order()
	last := enc.id[targets[len(targets)-1]-from]
	var sched []uint32
	for _, v := range order {
		sched = append(sched, enc.ev[v])
		if int32(v) == last {
			break
		}
	}
	g := witnessGoal{targets: targets, adjacent: adjacent}
	if verr := validateSchedule(ps.m, ps.p, from, sched, g); verr != nil {
		res.status = solve.Unknown
		res.err = fmt.Sprintf("the witness validator rejects the solver's schedule for events %v: %v", ps.seqs(targets), verr)
		res.rejected = true
		return res
	}
	// The schedule's steps that run the trace's events in their recorded
	// order from the window's start, up to the first of the finding's
	// accesses, join the recorded prefix, which shortens the witness
	// without changing it.
	first := slices.Min(targets)
	k := 0
	for k < len(sched)-1 && sched[k] == from+uint32(k) && sched[k] < first {
		k++
	}
	if k > 0 && validateSchedule(ps.m, ps.p, from+uint32(k), sched[k:], g) == nil {
		res.witnessFrom, sched = from+uint32(k), sched[k:]
	} else {
		res.witnessFrom = from
	}
	res.sched = sched
	return res
}

// outOfTimeNote is what a finding's note says of a check whose time ran
// out.
const outOfTimeNote = "its check ran out of time"

// undecided is what a finding's note says of a check that failed with err.
func undecided(err error) string {
	if errors.Is(err, errOutOfTime) {
		return outOfTimeNote
	}
	return err.Error()
}

// failure is what a check reports of err: nothing if the time ran out.
func failure(err error) string {
	if errors.Is(err, errOutOfTime) {
		return ""
	}
	return err.Error()
}

// solve encodes the window and checks it. With relaxed, a write or read
// whose value is not known may match any value, and only the reads a
// branch follows matter.
func (ps *preciseStage) solve(from, to uint32, targets []uint32, adjacent, relaxed bool) (*encoding, solve.Status, error) {
	enc, err := ps.encode(from, to, targets, adjacent, relaxed)
	if err != nil {
		return nil, solve.Unknown, err
	}
	if enc.unsat {
		return enc, solve.Unsat, nil
	}
	st := enc.s.Check(enc.assume...)
	if st == solve.Unknown {
		if err := solve.Err(enc.s); err != nil {
			return enc, st, err
		}
	}
	return enc, st, nil
}

func (ps *preciseStage) seqs(evs []uint32) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = ps.t.Events[e].Seq
	}
	return out
}

// windowOf returns the window [from, to) around targets: all of them and
// about ps.window events in all, three quarters of the rest before the
// first target (where the writes and lock sections a reordering needs
// usually are) and a quarter after the last.
func (ps *preciseStage) windowOf(targets []uint32) (from, to uint32, ok bool) {
	lo, hi := slices.Min(targets), slices.Max(targets)
	span := int(hi-lo) + 1
	if span > maxSpanFactor*ps.window {
		return 0, 0, false
	}
	n := len(ps.t.Events)
	extra := max(ps.window-span, 0)
	before := extra * 3 / 4
	after := extra - before
	f := int(lo) - before
	e := int(hi) + 1 + after
	if f < 0 {
		e = min(e-f, n)
		f = 0
	}
	if e > n {
		f = max(f-(e-n), 0)
		e = n
	}
	return uint32(f), uint32(e), true
}

// valueTable knows the value of each write that has one: recorded, or
// recorded by a read that read it in the run; and the value of each
// variable before the trace's first write of it. It holds the positions
// of each variable's writes and valued reads, and infers a write's value
// when asked.
type valueTable struct {
	t      *trace.Trace
	writes map[trace.ObjID][]uint32 // the writes of each variable, in trace order
	reads  map[trace.ObjID][]uint32 // its reads that recorded a value, in trace order
	lens   map[trace.ObjID][]uint32 // its reads that recorded a length (trace.ValueIsLen)
}

// maxReadersAsked bounds the reads of one write that value consults.
const maxReadersAsked = 64

func buildValueTable(t *trace.Trace) *valueTable {
	vt := &valueTable{t: t, writes: map[trace.ObjID][]uint32{}, reads: map[trace.ObjID][]uint32{}, lens: map[trace.ObjID][]uint32{}}
	for i := range t.Events {
		e := &t.Events[i]
		switch {
		case e.Kind.IsWrite():
			vt.writes[e.Obj] = append(vt.writes[e.Obj], uint32(i))
		case e.Kind == trace.KindRead && e.Flags&(trace.HasValue|trace.ValueIsLen) == trace.HasValue|trace.ValueIsLen:
			vt.lens[e.Obj] = append(vt.lens[e.Obj], uint32(i))
		case (e.Kind == trace.KindRead || e.Kind == trace.KindAtomicLoad) && e.Flags&trace.HasValue != 0:
			vt.reads[e.Obj] = append(vt.reads[e.Obj], uint32(i))
		}
	}
	return vt
}

// infer returns the value variable x holds just after its write w (from
// the trace's start if w is -1) and whether it is known: w's recorded
// value, or the value its readers before the next write recorded, if they
// agree. With isLen it is the length of what x holds (a slice, string or
// map), as the reads with trace.ValueIsLen recorded it.
func (vt *valueTable) infer(x trace.ObjID, w int, isLen bool) (uint64, bool) {
	if w >= 0 && !isLen {
		e := &vt.t.Events[w]
		if e.Flags&trace.HasValue != 0 && e.Kind != trace.KindAtomicRMW {
			return e.Value, true
		}
	}
	ws := vt.writes[x]
	next := uint32(len(vt.t.Events))
	if k, _ := slices.BinarySearch(ws, uint32(w+1)); k < len(ws) {
		next = ws[k]
	}
	rs := vt.reads[x]
	if isLen {
		rs = vt.lens[x]
	}
	k, _ := slices.BinarySearch(rs, uint32(w+1))
	var v uint64
	known := false
	for n := 0; k < len(rs) && rs[k] < next && n < maxReadersAsked; k, n = k+1, n+1 {
		rv := vt.t.Events[rs[k]].Value
		if known && rv != v {
			return 0, false
		}
		v, known = rv, true
	}
	return v, known
}

// valueBefore returns the value variable x holds before event from, and
// whether it is known.
func (vt *valueTable) valueBefore(x trace.ObjID, from uint32, isLen bool) (uint64, bool) {
	ws := vt.writes[x]
	k, _ := slices.BinarySearch(ws, from)
	if k == 0 {
		return vt.infer(x, -1, isLen)
	}
	return vt.infer(x, int(ws[k-1]), isLen)
}

// encoding is one check's constraints in a solver.
type encoding struct {
	s      solve.Solver
	ev     []uint32 // solver id -> trace event
	id     []int32  // window position -> solver id, -1 if left out
	assume []solve.Lit
	unsat  bool // decided without the solver
	// uncertain says the relaxed encoding differs: a read could not read
	// some write only because a value is not known, or a read matters only
	// because of a write: an Unsat answer is then not final.
	uncertain bool
	size      int
}

func (enc *encoding) close() {
	if enc.s != nil {
		_ = enc.s.Close()
	}
}

// bitset is a set of window positions.
type bitset []uint64

func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}

// section is a critical section within the window; acq or rel is -1 where
// it lies outside the window (held when the window starts, or released
// after it ends).
type section struct {
	g        trace.GoID
	acq, rel int
	read     bool
	handed   bool // released by another goroutine than g
}

// handedFrom returns the open section of secs (a write lock's, or with
// read a read lock's) that a release by a goroutine that holds none ends:
// the lock was handed over. Of a read lock's several readers, which one
// is not recorded; the earliest is taken.
func handedFrom(secs []section, read bool) (int, bool) {
	for i := range secs {
		if s := &secs[i]; s.rel < 0 && s.acq >= 0 && s.read == read {
			return i, true
		}
	}
	return 0, false
}

var errTooLarge = errors.New("the encoding exceeds its size bound")

// errOutOfTime says a check's budget ran out between its solver calls.
var errOutOfTime = errors.New("out of time")

// encode builds the constraints of the window [from, to) for targets.
func (ps *preciseStage) encode(from, to uint32, targets []uint32, adjacent, relaxed bool) (*encoding, error) {
	t := ps.t
	L := int(to - from)
	evs := t.Events[from:to]
	pos := func(e uint32) int { return int(e - from) }

	// Fixed edges: program order and the data-independent synchronisation.
	succ := make([][]int32, L)
	edge := func(a, b int) {
		// An edge may go back in trace order: the recorder writes a
		// send's next event before the receive it waited for.
		if a >= 0 && b >= 0 && a != b {
			succ[a] = append(succ[a], int32(b))
		}
	}
	lastOf := map[trace.GoID]int{}
	nextOf := make([]int, L) // next event of the same goroutine, -1 if none in the window
	sends := map[[2]uint64]int{}
	recvs := map[[2]uint64]int{}
	chanSend := map[trace.ObjID]int{}
	chanRecv := map[trace.ObjID]int{}
	wgOps := map[trace.ObjID][]int{}
	wgWait := map[trace.ObjID]int{} // the last Wait so far of each WaitGroup
	var afterWait [][2]int          // an operation after a Wait: (the Wait, it)
	notifs := map[trace.ObjID][]int{}
	onceRan := map[trace.ObjID]int{}
	atomicLast := map[trace.ObjID]int{}
	atomicReads := map[trace.ObjID][]int{}
	closes := map[trace.ObjID]int{}
	forks := map[trace.GoID]int{}
	firstOf := map[trace.GoID]int{}
	for i := range evs {
		e := &evs[i]
		nextOf[i] = -1
		if p, seen := lastOf[e.G]; seen {
			nextOf[p] = i
			edge(p, i)
		} else {
			firstOf[e.G] = i
			if f, isChild := forks[e.G]; isChild {
				edge(f, i)
			}
		}
		lastOf[e.G] = i
		switch e.Kind {
		case trace.KindFork:
			forks[trace.GoID(e.Arg)] = i
		case trace.KindSend:
			sends[[2]uint64{uint64(e.Obj), e.Arg}] = i
			if p, seen := chanSend[e.Obj]; seen {
				edge(p, i)
			}
			chanSend[e.Obj] = i
		case trace.KindRecv:
			if e.Arg == 0 {
				edge(closes[e.Obj]-1, i) // closes holds position+1
			} else {
				recvs[[2]uint64{uint64(e.Obj), e.Arg}] = i
				if s, seen := sends[[2]uint64{uint64(e.Obj), e.Arg}]; seen {
					edge(s, i)
				}
			}
			if p, seen := chanRecv[e.Obj]; seen {
				edge(p, i)
			}
			chanRecv[e.Obj] = i
		case trace.KindClose:
			closes[e.Obj] = i + 1
		case trace.KindWGAdd, trace.KindWGDone:
			wgOps[e.Obj] = append(wgOps[e.Obj], i)
			if w, seen := wgWait[e.Obj]; seen {
				afterWait = append(afterWait, [2]int{w, i})
			}
		case trace.KindWGWait:
			wgWait[e.Obj] = i
			// The WaitGroup operations keep their order around each Wait,
			// so that it returns with the counter it returned with.
			for _, o := range wgOps[e.Obj] {
				edge(o, i)
			}
			wgOps[e.Obj] = append(wgOps[e.Obj][:0], i)
		case trace.KindCondSignal, trace.KindCondBroadcast:
			notifs[e.Obj] = append(notifs[e.Obj], i)
		case trace.KindCondWait:
			for _, o := range notifs[e.Obj] {
				edge(o, i)
			}
		case trace.KindOnceDo:
			if e.Arg == 1 {
				onceRan[e.Obj] = i + 1
			} else {
				edge(onceRan[e.Obj]-1, i)
			}
		case trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW:
			if p, seen := atomicLast[e.Obj]; seen {
				edge(p, i)
			}
			if e.Kind != trace.KindAtomicLoad {
				for _, r := range atomicReads[e.Obj] {
					edge(r, i)
				}
				atomicReads[e.Obj] = atomicReads[e.Obj][:0]
				atomicLast[e.Obj] = i
			} else {
				atomicReads[e.Obj] = append(atomicReads[e.Obj], i)
			}
		}
	}
	// A WaitGroup operation after a Wait stays after it.
	for _, p := range afterWait {
		edge(p[0], p[1])
	}
	// A send of message k on a channel of capacity c completes (its
	// goroutine goes on) only after receive k-c.
	var notInPrefix []int // events that must stay after the violation
	for i := range evs {
		e := &evs[i]
		if e.Kind != trace.KindSend || nextOf[i] < 0 {
			continue
		}
		c, known := ps.m.chanCap(e.Obj)
		if !known || e.Arg <= c {
			continue
		}
		r, inTrace := ps.m.recvIdx[[2]uint64{uint64(e.Obj), e.Arg - c}]
		switch {
		case inTrace && r < from:
		case inTrace && r < to:
			edge(pos(r), nextOf[i])
		default:
			notInPrefix = append(notInPrefix, nextOf[i])
		}
	}

	// reach[i] holds the positions that i precedes through the fixed
	// edges, computed in reverse topological order.
	topo, acyclic := topoOrder(succ)
	if !acyclic {
		// No run orders its events so; the message names no window, so
		// that a trace with many such windows says it once.
		return nil, errors.New("some findings are left undecided: the trace's synchronisation orders some events in a cycle, which no run can do (such as a goroutine going on after a send before the receive the send waits for)")
	}
	words := (L + 63) / 64
	store := make([]uint64, L*words)
	reach := make([]bitset, L)
	for i := range reach {
		reach[i] = bitset(store[i*words : (i+1)*words])
	}
	for k := L - 1; k >= 0; k-- {
		i := topo[k]
		for _, j := range succ[i] {
			reach[i].set(int(j))
			reach[i].or(reach[j])
		}
	}
	before := func(a, b int) bool { return reach[a].has(b) }

	enc := &encoding{id: make([]int32, L)}
	last := pos(targets[len(targets)-1])
	// The events the violation precedes are never in the prefix.
	for i := range L {
		if before(last, i) {
			enc.id[i] = -1
			continue
		}
		enc.id[i] = int32(len(enc.ev))
		enc.ev = append(enc.ev, from+uint32(i))
	}
	in := func(i int) bool { return i >= 0 && enc.id[i] >= 0 }
	for i := 1; i < len(targets); i++ {
		if before(pos(targets[i]), pos(targets[i-1])) {
			enc.unsat = true
			return enc, nil
		}
	}
	b := ps.budget
	if !ps.deadline.IsZero() {
		if b.Time = time.Until(ps.deadline); b.Time <= 0 {
			return nil, errOutOfTime
		}
	}
	s, err := ps.open(len(enc.ev), b)
	if err != nil {
		return nil, err
	}
	enc.s = s
	lit := func(a, b int) solve.Lit {
		enc.size++
		return s.Before(int(enc.id[a]), int(enc.id[b]))
	}
	for i := range L {
		if !in(i) {
			continue
		}
		for _, j := range succ[i] {
			if in(int(j)) {
				s.Edge(int(enc.id[i]), int(enc.id[j]))
			}
		}
	}
	// notInPrefixLit(i) is the literal "i is not in the prefix": after
	// the violation. Its second result is false when i is always in it.
	notInPrefixLit := func(i int) (solve.Lit, bool) {
		if i == last || before(i, last) {
			return 0, false
		}
		return lit(last, i), true
	}
	for _, i := range notInPrefix {
		if !in(i) {
			continue
		}
		l, can := notInPrefixLit(i)
		if !can {
			enc.unsat = true
			return enc, nil
		}
		s.Assert(l)
	}

	// Lock mutual exclusion.
	sections := map[trace.ObjID][]section{}
	open := map[[2]uint64][]int{} // (lock, goroutine) -> indices of open sections
	for i := range evs {
		e := &evs[i]
		k := [2]uint64{uint64(e.Obj), uint64(e.G)}
		switch e.Kind {
		case trace.KindAcquire, trace.KindRAcquire:
			open[k] = append(open[k], len(sections[e.Obj]))
			sections[e.Obj] = append(sections[e.Obj], section{g: e.G, acq: i, rel: -1, read: e.Kind == trace.KindRAcquire})
		case trace.KindRelease, trace.KindRRelease:
			if st := open[k]; len(st) > 0 {
				sections[e.Obj][st[len(st)-1]].rel = i
				open[k] = st[:len(st)-1]
			} else if h, ok := handedFrom(sections[e.Obj], e.Kind == trace.KindRRelease); ok {
				// A lock handed over: another goroutine unlocks what its
				// holder locked, and the holder's section ends there.
				hk := [2]uint64{uint64(e.Obj), uint64(sections[e.Obj][h].g)}
				open[hk] = slices.DeleteFunc(open[hk], func(x int) bool { return x == h })
				sections[e.Obj][h].rel, sections[e.Obj][h].handed = i, true
			} else {
				sections[e.Obj] = append(sections[e.Obj], section{g: e.G, acq: -1, rel: i, read: e.Kind == trace.KindRRelease})
			}
		}
	}
	// In the order of the locks, not of the map's: the clauses' order
	// decides which model the solver finds, and so the witness, which
	// must be the same in every run.
	for _, l := range slices.Sorted(maps.Keys(sections)) {
		secs := sections[l]
		for i := range secs {
			for j := i + 1; j < len(secs); j++ {
				if !ps.exclude(enc, secs[i], secs[j], before, in, lit, notInPrefixLit) {
					return enc, nil
				}
				if enc.size > ps.maxSize {
					enc.close()
					return nil, errTooLarge
				}
			}
		}
	}

	// Read-from consistency.
	if ps.vals == nil {
		ps.vals = ps.valsOnce.get(t)
	}
	writes := map[trace.ObjID][]int{}
	for i := range evs {
		if in(i) && evs[i].Kind.IsWrite() {
			writes[evs[i].Obj] = append(writes[evs[i].Obj], i)
		}
	}
	lastWrite := map[trace.ObjID]int{}
	lastSeen := make([]int, L) // per read, its recorded source (-1: the state at the window's start)
	for i := range evs {
		e := &evs[i]
		if e.Kind.IsWrite() {
			lastWrite[e.Obj] = i + 1
		}
		if e.Kind == trace.KindRead {
			lastSeen[i] = lastWrite[e.Obj] - 1
		}
	}
	tpos := make([]int, len(targets))
	for k, t := range targets {
		tpos[k] = pos(t)
	}
	vc := &valueCtx{from: from, evs: evs, nextOf: nextOf, last: last, targets: targets,
		in: in, before: before, lit: lit, outside: notInPrefixLit, writes: writes, lastSeen: lastSeen,
		addrUser: addressUsers(evs, tpos, in)}
	if !relaxed {
		ps.encodeValues(enc, vc)
		if enc.size > ps.maxSize {
			enc.close()
			return nil, errTooLarge
		}
	}
	for i := range evs {
		e := &evs[i]
		if !relaxed || e.Kind != trace.KindRead || !in(i) {
			continue
		}
		dep := vc.userOf(i)
		if !in(dep) {
			continue
		}
		rf, ok := ps.readsOneOf(enc, vc, nil, i, ps.relaxedAccept(vc, i), false)
		if enc.size > ps.maxSize {
			enc.close()
			return nil, errTooLarge
		}
		var c solve.Lit
		switch guard, can := notInPrefixLit(dep); {
		case !ok && !can:
			enc.unsat = true
			return enc, nil
		case !ok:
			c = guard
		case !can:
			c = rf
		default:
			c = s.Or(guard, rf)
		}
		s.Assert(c)
	}

	// The finding.
	for i := 1; i < len(targets); i++ {
		enc.assume = append(enc.assume, lit(pos(targets[i-1]), pos(targets[i])))
	}
	if adjacent {
		a, b := pos(targets[0]), pos(targets[1])
		for i := range L {
			if !in(i) || i == a || i == b || before(i, a) || before(b, i) {
				continue
			}
			if before(a, i) && before(i, b) {
				enc.unsat = true
				return enc, nil
			}
			s.Assert(s.Or(lit(i, a), lit(b, i)))
		}
	}
	return enc, nil
}

// topoOrder returns the nodes of the graph in a topological order (Kahn's
// algorithm, smallest position first, so the trace order where it can),
// and false if the graph has a cycle.
func topoOrder(succ [][]int32) ([]int, bool) {
	n := len(succ)
	indeg := make([]int32, n)
	for _, ss := range succ {
		for _, j := range ss {
			indeg[j]++
		}
	}
	order := make([]int, 0, n)
	var queue []int
	next := 0 // positions below next with indegree 0 are queued
	for len(order) < n {
		for ; next < n && len(queue) == 0; next++ {
			if indeg[next] == 0 {
				queue = append(queue, next)
				indeg[next] = -1
			}
		}
		if len(queue) == 0 {
			return nil, false
		}
		i := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		order = append(order, i)
		for _, j := range succ[i] {
			indeg[j]--
			if indeg[j] == 0 && int(j) < next {
				queue = append(queue, int(j))
				indeg[j] = -1
			}
		}
	}
	return order, true
}

// valueUser returns the first event after read r of its goroutine in the
// window that comes after a taken branch, which r may decide (the guard
// g(t) of seed 001, section 4.2), or -1 if none.
func valueUser(evs []trace.Event, nextOf []int, r int) int {
	for i := nextOf[r]; i >= 0; i = nextOf[i] {
		if evs[i].Branches > 0 {
			return i
		}
	}
	return -1
}

// exclude asserts that sections a and b, of one lock, do not overlap in
// the prefix. It returns false if that is impossible (enc.unsat is set).
func (ps *preciseStage) exclude(enc *encoding, a, b section, before func(int, int) bool, in func(int) bool, lit func(int, int) solve.Lit, outside func(int) (solve.Lit, bool)) bool {
	if a.g == b.g && !a.handed && !b.handed || a.read && b.read {
		return true // ordered by their goroutine, or shared
	}
	if a.acq >= 0 && !in(a.acq) || b.acq >= 0 && !in(b.acq) {
		return true // a section that starts after the violation
	}
	var or []solve.Lit
	// first ends before second starts.
	ends := func(first, second section) bool {
		if first.rel < 0 || !in(first.rel) || second.acq < 0 {
			return false
		}
		if before(first.rel, second.acq) {
			return true
		}
		if !before(second.acq, first.rel) {
			or = append(or, lit(first.rel, second.acq))
		}
		return false
	}
	if ends(a, b) || ends(b, a) {
		return true
	}
	for _, acq := range []int{a.acq, b.acq} {
		if acq < 0 {
			continue
		}
		if l, can := outside(acq); can {
			or = append(or, l)
		}
	}
	if len(or) == 0 {
		enc.unsat = true
		return false
	}
	enc.s.Assert(enc.s.Or(or...))
	return true
}
