package predict

import (
	"cmp"
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/avcheck/avcheck/dynamic/solve"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file runs the whole prediction: the engines (pattern search and the
// meta-analysis), AVFilter on the triplets, a validated witness for every
// finding, and deduplication by source sites.

// Options configures Predict.
type Options struct {
	// All keeps the findings that AVFilter removes or that have no
	// witness, with Finding.Dropped saying why. Without it they are left
	// out.
	All bool
	// Meta also runs the meta-analysis (meta.go), for comparing the
	// engines. The minimal triplets it finds (no access of the region's
	// goroutine to the variable between the first and the last) the
	// pattern search finds too; the others it adds repeat one of those
	// with an access of the region in between (a W-W-R where the region
	// writes, writes again and reads is also a W-W-W and a W-W-R over the
	// second write), and it costs more time and memory than the search
	// on a test suite's trace, so avcheck run and avcheck test leave it
	// out as avcheck predict does.
	Meta bool
	// NoFilter skips AVFilter, so that the differential tests can compare
	// the search and witness stages with an enumeration of schedules,
	// which knows nothing of data constraints.
	NoFilter bool
	// Precise runs the precise stage (precise.go) on the findings that
	// survive the cheaper stages and on those AVFilter drops: a solver
	// proves each one (LevelProven, with the model's witness) or shows it
	// infeasible (dropped).
	Precise bool
	// Window is the number of events around a finding the precise stage
	// reorders (DefaultWindow if zero).
	Window int
	// Solver names the precise stage's engine: "gini" (the default), "z3"
	// or "cvc5".
	Solver string
	// Budget bounds each check of the precise stage (DefaultPreciseTime
	// if zero).
	Budget solve.Budget
	// StageTime, if positive, bounds the deciding of the candidates, the
	// precise stage's checks and the witness searches together, from the
	// first candidate: a check still running then is cut short, and the
	// candidates not checked by then go on to the witness search at
	// their level, with Finding.Note saying so (PreciseStats.Skipped
	// counts them); the candidates whose witness search has not begun by
	// then are reported at their level without a witness, with a note
	// (Result.Unwitnessed counts them), since a search takes time that
	// grows with the trace and their number with its sites, and none is
	// dropped unsearched. Which findings are proven or have a witness
	// then depends on the machine's speed; their order does not.
	StageTime time.Duration
	// Context, if not nil, ends the prediction early when it is done (an
	// interrupt): PredictIndexed then returns the findings of the
	// candidates decided by then, and Result.Stopped says so. It is
	// looked at between variables of the search, between candidates,
	// and within the precise stage's checks (solve.Budget.Stop).
	Context context.Context
	// Progress, if not nil, is called each time a candidate is decided,
	// with how many are and how many there are, from the goroutines that
	// decide them.
	Progress func(decided, candidates int)
	// newSolver replaces Solver in tests.
	newSolver solverFactory
	// newIndex replaces the index's build in tests.
	newIndex func(*trace.Trace) *patIndex
}

// Result is what Predict found, with the size of the trace.
type Result struct {
	Findings   []Finding
	Events     int
	Goroutines int
	Variables  int
	// Precise is what the precise stage did, nil if it did not run.
	Precise *PreciseStats
	// Stopped says that Options.Context ended the prediction early:
	// Findings are those of the Decided candidates of the Candidates the
	// search found (none, if it stopped the search).
	Stopped             bool
	Candidates, Decided int
	// Unwitnessed counts the findings reported without a witness search,
	// Options.StageTime having run out before it (their note says so).
	Unwitnessed int
}

// Reported returns the findings that are not dropped.
func (r *Result) Reported() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Dropped == "" {
			out = append(out, f)
		}
	}
	return out
}

// Predict runs the prediction pipeline over a trace in memory.
func Predict(t *trace.Trace, opts Options) *Result { return PredictIndexed(t, nil, opts) }

// PredictIndexed is Predict starting from the index that p built while t
// was read (prepass.go); with p nil it is Predict.
func PredictIndexed(t *trace.Trace, p *Prepass, opts Options) *Result {
	// The meta-analysis is independent of the pattern search and about as
	// costly, so it runs alongside it.
	var stop <-chan struct{}
	if opts.Context != nil {
		stop = opts.Context.Done()
	}
	var meta chan []Finding
	if opts.Meta {
		meta = make(chan []Finding, 1)
		go func() { meta <- MetaAnalysisTrace(t) }()
	}
	// The index is built by a goroutine of its own, so that the
	// prediction stops at once when it is cancelled during the build
	// (minutes, on a trace of 100,000 goroutines), leaving the goroutine
	// to end by itself, as the meta-analysis's is.
	index := opts.newIndex
	if index == nil {
		index = buildIndex
	}
	built := make(chan *patIndex, 1)
	go func() {
		if p != nil {
			built <- p.finish(t)
		} else {
			built <- index(t)
		}
	}()
	var ix *patIndex
	select {
	case ix = <-built:
	case <-stop:
		return &Result{Events: len(t.Events), Stopped: true}
	}
	res := &Result{Events: len(t.Events), Goroutines: len(ix.gids), Variables: len(ix.vars)}
	search := newSearch(ix)
	search.stop = stop
	cands := search.run()
	if meta != nil {
		select {
		case fs := <-meta:
			cands = addMeta(t, cands, fs)
		case <-stop:
		}
	}
	if stopped(stop) {
		// The meta-analysis's goroutine is left to end by itself.
		res.Stopped = true
		return res
	}
	// The witnesses' view of the synchronisation (28 bytes per lock
	// operation) is made once the search is done and only if it found
	// something to decide: made alongside the search, it was part of
	// the peak memory of every trace, with findings or without.
	var m *syncMeta
	if len(cands) > 0 {
		m = newSyncMeta(t)
	}
	res.Candidates = len(cands)
	// The candidates are visited in trace order of their closest
	// instance: neighbouring windows read the same part of the trace.
	slices.SortFunc(cands, func(a, b *patCand) int { return cmp.Compare(slices.Min(a.reps[0]), slices.Min(b.reps[0])) })
	// Each candidate is decided on its own (AVFilter, the precise stage,
	// the witness), so GOMAXPROCS workers take them in that order, each
	// with its own AVFilter caches, precise stage and prefix state; the
	// outcomes, and what the precise stage counted for each, are put
	// together in candidate order, so they do not depend on the schedule.
	type outcome struct {
		f           Finding
		keep        bool
		unwitnessed bool
		stats       *PreciseStats
		decided     bool
	}
	outs := make([]outcome, len(cands))
	var next, decided atomic.Int64
	var wg sync.WaitGroup
	var vals valueTableOnce
	// The precise stage's time runs from here, when the candidates are
	// ready to be decided.
	var stageEnd time.Time
	if opts.StageTime > 0 {
		stageEnd = time.Now().Add(opts.StageTime)
	}
	for range min(runtime.GOMAXPROCS(0), len(cands)) {
		wg.Go(func() {
			av := newAVIndex(t, ix)
			// The search and the validator start from the state the
			// recorded run was in at the window's start.
			pb := m.newPrefixState()
			var ps *preciseStage
			if opts.Precise {
				ps = newPreciseStage(t, m, pb, &opts)
				ps.valsOnce = &vals
				ps.stageEnd = stageEnd
				ps.budget.Stop = stop
			}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cands) || stopped(stop) {
					return
				}
				if ps != nil {
					ps.stats, ps.errs = &PreciseStats{}, map[string]bool{}
				}
				f, keep, unwitnessed := decideCandidate(t, m, pb, av, ps, &opts, ix, cands[i], stageEnd)
				if stopped(stop) {
					return // perhaps cut short: not decided
				}
				// Its instances are no longer needed: on a trace of
				// millions of candidates they are much of the memory.
				cands[i] = nil
				outs[i].f, outs[i].keep, outs[i].unwitnessed, outs[i].decided = f, keep, unwitnessed, true
				if ps != nil {
					outs[i].stats = ps.stats
				}
				n := int(decided.Add(1))
				if opts.Progress != nil {
					opts.Progress(n, len(cands))
				}
			}
		})
	}
	wg.Wait()
	res.Decided = int(decided.Load())
	res.Stopped = res.Decided < res.Candidates
	if opts.Precise {
		res.Precise = &PreciseStats{}
		seen := map[string]bool{}
		for _, o := range outs {
			if o.decided {
				res.Precise.add(o.stats, seen)
			}
		}
	}
	n := 0
	for _, o := range outs {
		if o.decided && o.keep {
			n++
		}
	}
	out := make([]Finding, 0, n)
	for i := range outs {
		if o := &outs[i]; o.decided && o.keep {
			out = append(out, o.f)
			if o.unwitnessed {
				res.Unwitnessed++
			}
		}
	}
	outs = nil
	out = Dedupe(out)
	SortFindings(t, out)
	res.Findings = out
	return res
}

// addMeta adds the meta-analysis's triplets that the pattern search did not
// find under the same sites.
func addMeta(t *trace.Trace, cands []*patCand, meta []Finding) []*patCand {
	have := make(map[string]bool, len(cands))
	for _, c := range cands {
		have[DedupeKey(&c.f)] = true
	}
	bySeq := func(seq uint64) (uint32, bool) {
		if seq < uint64(len(t.Events)) && t.Events[seq].Seq == seq {
			return uint32(seq), true
		}
		i, ok := slices.BinarySearchFunc(t.Events, seq, func(e trace.Event, s uint64) int { return cmp.Compare(e.Seq, s) })
		return uint32(i), ok
	}
	for _, f := range meta {
		if have[DedupeKey(&f)] || len(f.Accesses) != 3 {
			continue
		}
		rep := make([]uint32, 3)
		ok := true
		for i, a := range f.Accesses {
			rep[i], ok = bySeq(a.Seq)
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		have[DedupeKey(&f)] = true
		f.Level = LevelPredicted
		cands = append(cands, &patCand{f: f, reps: [][]uint32{rep}, dist: []uint64{0}})
	}
	return cands
}

// decideCandidate runs AVFilter (for a triplet), the precise stage (ps, if
// not nil) and the witness search on one candidate, and returns its
// finding, whether it is reported, and whether it is reported without a
// witness search because stageEnd (zero for none) had passed.
func decideCandidate(t *trace.Trace, m *syncMeta, pb *prefixState, av *avIndex, ps *preciseStage, opts *Options, ix *patIndex, c *patCand, stageEnd time.Time) (f Finding, keep, unwitnessed bool) {
	f = c.f
	reps := c.reps
	atomicity := f.Kind == KindAtomicity || f.Kind == KindAtomicSet
	// The finding's intent is that of the region of the instance it
	// shows: instances of one site combination may be in different
	// regions (two tests' loops calling the same methods).
	defer func() {
		if atomicity && len(f.Accesses) > 0 {
			for _, r := range c.reps {
				if t.Events[r[0]].Seq == f.Accesses[0].Seq {
					f.Intent = ix.intentOf(t.Events[r[0]].Region)
					break
				}
			}
		}
	}()
	if atomicity {
		// A violation matters only if its region was meant to be atomic:
		// one that proximity alone proposed stays predicted, whatever
		// the later stages would show (the rule of intent,
		// analyzers/regions/intent.go). Each instance is held to its own
		// region's intent.
		var kept [][]uint32
		first := ""
		for _, r := range reps {
			if why := intentFails(t, ix, f.Kind, r); why == "" {
				kept = append(kept, r)
			} else if first == "" {
				first = why
			}
		}
		if kept == nil {
			f.Dropped = first
			setAccesses(t, &f, reps[0])
			return f, opts.All, false
		}
		reps = kept
	}
	kept, why := ix.outsideOrder(t, f.Kind, reps)
	if why != "" {
		f.Dropped = why
		setAccesses(t, &f, reps[0])
		return f, opts.All, false
	}
	reps = kept
	doubt := ""
	if (f.Kind == KindAtomicity || f.Kind == KindAtomicSet) && !opts.NoFilter {
		var kept [][]uint32
		reason := ""
		for _, r := range reps {
			if why := av.dropAny(r); why != "" {
				if reason == "" {
					reason = why
				}
				continue
			}
			kept = append(kept, r)
		}
		if kept == nil && f.Kind == KindAtomicSet {
			// Not dropped: such a finding can be real where the values
			// it reads had another history than this run's (a
			// connection Ready from an earlier update, where this run
			// read the Ready the interleaved update wrote). It stays
			// predicted, and says what the filter saw.
			doubt = reason
			kept = reps
		}
		if kept == nil {
			f.Dropped = reason
			setAccesses(t, &f, reps[0])
			// AVFilter is conservative: the precise stage recovers the
			// real violations it drops (seed 000, Fig. 6).
			if ps != nil && ps.decide(&f, reps) == verdictProven {
				return f, true, false
			}
			return f, opts.All, false
		}
		reps = kept
		if f.Kind == KindAtomicity {
			// The paper's filter is for triplets; an atomic-set
			// instance that passes it keeps its level.
			f.Level = LevelFiltered
		}
	}
	if ps != nil {
		switch ps.decide(&f, reps) {
		case verdictProven:
			return f, true, false
		case verdictInfeasible:
			return f, opts.All, false
		}
	}
	if doubt != "" {
		doubt = "AVFilter doubts it: " + doubt + "; it can happen only where those values had another history than in this run"
		if f.Note == "" {
			f.Note = doubt
		} else {
			f.Note += "; " + doubt
		}
	}
	if !stageEnd.IsZero() && !time.Now().Before(stageEnd) {
		// Out of time: reported at its level, unsearched, rather than
		// dropped unsearched.
		setAccesses(t, &f, reps[0])
		if f.Kind == KindRace {
			f.Pattern = racePattern(t, reps[0])
		}
		switch f.Note {
		case "":
			f.Note = unwitnessedNote
		case skippedNote:
			f.Note = "neither checked by the precise stage nor given a witness schedule: the time to decide the possible violations (-budget) ran out first"
		default:
			f.Note += "; " + unwitnessedNote
		}
		return f, true, true
	}
	for _, r := range reps {
		g := witnessGoal{targets: r, adjacent: f.Kind == KindRace}
		from, full, reduced, err := buildWitness(m, pb, g)
		if err != nil {
			continue
		}
		sched := reduced
		if validateSchedule(m, pb, from, sched, g) != nil {
			sched = full
			if validateSchedule(m, pb, from, sched, g) != nil {
				continue
			}
		}
		setAccesses(t, &f, r)
		if f.Kind == KindRace {
			f.Pattern = racePattern(t, r)
		}
		f.WitnessFrom = t.Events[from].Seq
		f.Witness = make([]uint64, len(sched))
		for i, e := range sched {
			f.Witness[i] = t.Events[e].Seq
		}
		return f, true, false
	}
	f.Dropped = "no schedule of the trace realises it (checked by witness search)"
	setAccesses(t, &f, reps[0])
	return f, opts.All, false
}

// intentFails says why the instance r of a violation of kind k breaks
// nothing its region is meant to keep atomic, or "" if it may.
func intentFails(t *trace.Trace, ix *patIndex, k FindingKind, r []uint32) string {
	in := ix.intentOf(t.Events[r[0]].Region)
	why := in.rules(t.Events[r[0]].Kind)
	if why == "" {
		why = ix.outsideEvidence(t, in, r)
	}
	if why == "" && k == KindAtomicity {
		why = ix.outsideSection(t, in, r)
	}
	if why == "" && k == KindAtomicity {
		why = rechecked(t, in, r)
	}
	return why
}

// unwitnessedNote is the note of a finding reported without a witness
// search, the time to decide (Options.StageTime) having run out.
const unwitnessedNote = "no witness schedule searched: the time to decide the possible violations (-budget) ran out first"

// racePattern is a race's pattern, its two accesses' operations in order.
func racePattern(t *trace.Trace, r []uint32) string {
	return opLetter(t.Events[r[0]].Kind == trace.KindWrite) + "-" + opLetter(t.Events[r[1]].Kind == trace.KindWrite)
}
