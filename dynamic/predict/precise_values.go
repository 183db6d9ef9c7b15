package predict

import (
	"math"
	"slices"

	"github.com/avcheck/avcheck/dynamic/solve"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file is the read-from part of the precise stage's encoding that
// proves (precise.go): Fusion's symbolic values (seed 001, section 4.2)
// reduced to one question per event, "is this value the recorded one?",
// since the trace records values, not the expressions that computed them.
//
// For each read r of the prefix, S(r) is a variable that may be true only
// if r reads the value it recorded: it reads its recorded source, or a
// write known to have written the value r recorded, and that write wrote
// its recorded value. A write (any event) wrote its recorded value when
// every read of its goroutine before it in the window did: V(e) is the
// conjunction of S over those reads (the events before the window run as
// recorded). A write's known value (trace.Event.Value, or what the reads
// that read it in the run recorded) is only its value under V, except
// for a write of a constant of the program (trace.ValueConst), which
// stores its value in every interleaving it happens in, whatever its
// goroutine read before it: it needs no V.
//
// A read that carries a range (trace.HasRange: the recorder checked that
// every value in it takes the read's branches as recorded, and that the
// value flows only into later writes) has a second variable K(r): r
// reads a write that wrote its recorded value, and that value, known, is
// in the range (or r reads its recorded source). For other reads K is S.
// C(e), the goroutine's course up to e, is the conjunction of K over the
// reads before e: the branches went as recorded.
//
// The constraints, each only within the prefix (events after the
// violation are unconstrained, section 5):
//
//   - a read followed by a taken branch (Event.Branches on a later event
//     of its goroutine) needs K: the branch may test it; so does a read
//     whose value is the address one of the finding's accesses goes
//     through (addressUsers), at that access;
//   - a memory access needs C: its address may have been computed from
//     values read before it (a pointer, a slice, an index), and a range
//     never covers such a use (but see AddrVaries below); so does an
//     event that passes a value to another goroutine (a send, a go
//     statement, a WaitGroup.Add; atomic stores and read-modify-writes
//     are accesses), which no range covers either, and, where an event
//     of another goroutine in the prefix waits for it (a happens-before
//     edge: a receive, a close, WaitGroup.Done or Wait, a Cond
//     notification, the Once.Do that ran the function), any other event:
//     its object's address may have been computed from values read too
//     (wg := s.wg; wg.Done()), and the other goroutine must not rely on
//     an event that, with other values, would have gone elsewhere or not
//     returned (a lock operation has no such edge: another goroutine
//     never needs a lock to have been taken). The violation's last
//     access is the exception: it is taken to be at its recorded address
//     whatever its goroutine read before it (typically the region's own
//     read of the same variable, whose value flows into it), as the
//     trace cannot tell, unless a read's value says it is that address
//     (above); nothing in the prefix reads what it writes;
//   - a write whose address depends on values read (trace.AddrVaries)
//     writes where it was recorded only under V; otherwise it may have
//     written anywhere, so a read after it has neither S nor K, and such
//     a write cannot be one of the finding's accesses.
//
// S and K are implied by their conditions, never the reverse: a solver
// sets them false whenever it likes, which only forbids more. The
// conditions of S(r) refer to V of writes before r, which refer to S of
// reads before those: every dependency points back in the interleaving,
// so a model's S and K are true only where the recorded values hold.
//
// A range with no bound at all (a value that flows only into writes)
// accepts any write, whatever it wrote.

// addressUsers returns, per window position, for a read whose recorded
// value is an address (trace.ValueIsAddr) that a later access of its
// goroutine in the window goes through, where that access is one of the
// finding's (targets, window positions) or another read so marked, the
// position of the earliest such access; -1 elsewhere.
//
// Such a read decides which variable the finding's access touches: the
// data dependence of an address on an earlier read, which Fusion's
// symbolic encoding keeps (seed 001, section 4.2: an access's address
// is an expression over the values read before it, and a violation is
// of accesses to one shared variable). An interleaving in which the read
// sees another value has the access touch another variable, and does not
// exhibit the finding, so the read must see its recorded value in every
// interleaving that does: it matters as a read a branch follows does,
// under both approximations, whether or not a branch follows it. The
// chain goes back through reads of pointers to the pointers (r :=
// p.idle[n-1] before r.status), each at its recorded address.
func addressUsers(evs []trace.Event, targets []int, in func(int) bool) []int {
	users := make([]int, len(evs))
	for i := range users {
		users[i] = -1
	}
	isTarget := make(map[int]bool, len(targets))
	for _, t := range targets {
		isTarget[t] = true
	}
	// The accesses of each goroutine whose address matters, latest
	// first, as the loop goes back.
	type use struct {
		pos  int
		addr uint64
	}
	uses := map[trace.GoID][]use{}
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if !in(i) {
			continue
		}
		if e.Kind == trace.KindRead && e.Flags&(trace.ValueIsAddr|trace.HasValue) == trace.ValueIsAddr|trace.HasValue {
			size := max(e.Arg, 1)
			for _, u := range uses[e.G] {
				if u.addr >= e.Value && u.addr-e.Value < size {
					users[i] = u.pos // the earliest so far: uses are latest first
				}
			}
		}
		if isTarget[i] || users[i] >= 0 {
			uses[e.G] = append(uses[e.G], use{pos: i, addr: e.Obj.Addr()})
		}
	}
	return users
}

// valueVars are the variables of one encoding, per window position; a
// zero Lit where an event has none.
type valueVars struct {
	S, K []solve.Lit // reads of the prefix
	V, C []solve.Lit // every event of the prefix: its goroutine's chains before it
}

// valueCtx is what encodeValues needs of encode.
type valueCtx struct {
	from     uint32
	evs      []trace.Event
	nextOf   []int
	last     int
	targets  []uint32
	in       func(int) bool
	before   func(int, int) bool
	lit      func(int, int) solve.Lit
	outside  func(int) (solve.Lit, bool)
	addrUser []int                 // addressUsers of the window
	writes   map[trace.ObjID][]int // the prefix's writes of each variable
	lastSeen []int                 // per read, its recorded source's position, -1 for the state at the window's start
	differ   []bool                // mayDiffer's answer, once computed
}

// userOf returns the event that read r's value matters to: the earlier
// of the first event a branch may make depend on it (valueUser) and the
// access whose address it is (addressUsers); -1 if neither.
func (c *valueCtx) userOf(r int) int {
	dep := valueUser(c.evs, c.nextOf, r)
	if a := c.addrUser[r]; a >= 0 && (dep < 0 || a < dep) {
		dep = a
	}
	return dep
}

// encodeValues asserts the read-from constraints of the approximation
// that proves.
func (ps *preciseStage) encodeValues(enc *encoding, c *valueCtx) {
	s := enc.s
	L := len(c.evs)
	vv := valueVars{S: make([]solve.Lit, L), K: make([]solve.Lit, L), V: make([]solve.Lit, L), C: make([]solve.Lit, L)}
	truth := s.And()
	chainV := map[trace.GoID]solve.Lit{}
	chainC := map[trace.GoID]solve.Lit{}
	var varies []int // the prefix's AddrVaries writes
	for i := range c.evs {
		if !c.in(i) {
			continue
		}
		e := &c.evs[i]
		v, ok := chainV[e.G]
		if !ok {
			v = truth
		}
		cc, ok := chainC[e.G]
		if !ok {
			cc = truth
		}
		vv.V[i], vv.C[i] = v, cc
		if e.Kind.IsWrite() && e.Flags&trace.AddrVaries != 0 {
			varies = append(varies, i)
		}
		if e.Kind != trace.KindRead {
			continue
		}
		vv.S[i] = s.Var()
		vv.K[i] = vv.S[i]
		if _, ranged := e.Range(); ranged {
			vv.K[i] = s.Var()
		}
		chainV[e.G] = s.And(v, vv.S[i])
		chainC[e.G] = s.And(cc, vv.K[i])
	}
	// need asserts that l holds if event i is in the prefix.
	need := func(i int, l solve.Lit) {
		enc.uncertain = true
		if guard, can := c.outside(i); can {
			l = s.Or(guard, l)
		}
		s.Assert(l)
	}
	for i := range c.evs {
		if !c.in(i) || c.evs[i].Kind != trace.KindRead {
			continue
		}
		ps.defineRead(enc, c, &vv, varies, i)
		if enc.size > ps.maxSize {
			return
		}
		if dep := c.userOf(i); c.in(dep) {
			need(dep, vv.K[i])
		}
	}
	waits := map[trace.GoID]bool{} // the goroutines that wait for an event
	for i := range c.evs {
		if !c.in(i) || i == c.last || vv.C[i] == truth {
			continue
		}
		switch e := &c.evs[i]; {
		case e.Kind.IsAccess(), e.Kind == trace.KindSend, e.Kind == trace.KindFork, e.Kind == trace.KindWGAdd:
			need(i, vv.C[i])
		case e.Kind == trace.KindRecv, e.Kind == trace.KindClose, e.Kind == trace.KindWGDone, e.Kind == trace.KindWGWait,
			e.Kind == trace.KindCondSignal, e.Kind == trace.KindCondBroadcast, e.Kind == trace.KindOnceDo:
			// The first event of each other goroutine that i precedes
			// needs i's course: the later ones come after it.
			clear(waits)
			for j := range c.evs {
				if g := c.evs[j].G; g != e.G && !waits[g] && c.in(j) && c.before(i, j) {
					waits[g] = true
					need(j, vv.C[i])
				}
			}
		}
	}
	for _, t := range c.targets {
		i := int(t - c.from)
		if c.evs[i].Kind.IsWrite() && c.evs[i].Flags&trace.AddrVaries != 0 {
			need(i, vv.V[i])
		}
	}
}

// defineRead asserts what S and K of read r imply.
func (ps *preciseStage) defineRead(enc *encoding, c *valueCtx, vv *valueVars, varies []int, r int) {
	s := enc.s
	e := &c.evs[r]
	src := c.lastSeen[r]
	isLen := e.Flags&trace.ValueIsLen != 0
	rv, rKnown := int64(e.Value), e.Flags&trace.HasValue != 0
	rng, ranged := e.Range()
	value := func(w int) (int64, bool) { return ps.valueAt(c, e.Obj, w, isLen) }
	exact := func(w int) bool {
		if w == src {
			return true
		}
		if isLen || !rKnown {
			return false
		}
		v, ok := value(w)
		return ok && v == rv
	}
	full := rng == trace.Range{Lo: math.MinInt64, Hi: math.MaxInt64}
	inRange := func(w int) bool {
		if w == src || full {
			return true
		}
		v, ok := value(w)
		return ok && rng.Contains(v)
	}
	alias := ps.aliasFree(enc, c, vv, varies, r)
	define := func(x solve.Lit, accept func(int) bool, valid bool) {
		rf, ok := ps.readsOneOf(enc, c, vv, r, accept, valid)
		if !ok {
			s.Assert(x.Not())
			return
		}
		s.Assert(s.Or(x.Not(), s.And(rf, alias)))
	}
	define(vv.S[r], exact, true)
	if ranged {
		define(vv.K[r], inRange, !full)
	}
}

// valueAt returns the value (or, with isLen, the length) variable x holds
// after the write at window position w, or at the window's start for -1,
// if it is known.
func (ps *preciseStage) valueAt(c *valueCtx, x trace.ObjID, w int, isLen bool) (int64, bool) {
	var v uint64
	var ok bool
	if w >= 0 {
		v, ok = ps.vals.infer(x, int(c.from)+w, isLen)
	} else {
		v, ok = ps.vals.valueBefore(x, c.from, isLen)
	}
	return int64(v), ok
}

// relaxedAccept returns what read r may read under the approximation
// that refutes: its recorded source, a write known to have written the
// value r recorded or one of its range, or a write whose value is not
// known (or whose value r cannot be compared with). A write's recorded
// value is known only if its goroutine took in no value in the window
// before it (see mayDiffer), or if it is a constant of the program
// (writesConst), which no value taken in changes. For a read that
// recorded a length (trace.ValueIsLen), a write of another length wrote
// another value; one of the same length may have written the same.
func (ps *preciseStage) relaxedAccept(c *valueCtx, r int) func(int) bool {
	e := &c.evs[r]
	isLen := e.Flags&trace.ValueIsLen != 0
	rv, rKnown := int64(e.Value), e.Flags&trace.HasValue != 0
	rng, ranged := e.Range()
	differ := c.mayDiffer()
	return func(w int) bool {
		if w == c.lastSeen[r] {
			return true
		}
		if w >= 0 && differ[w] && !writesConst(&c.evs[w]) {
			return true
		}
		v, known := ps.valueAt(c, e.Obj, w, isLen)
		switch {
		case !known:
			return true
		case ranged:
			return rng.Contains(v)
		case rKnown:
			return v == rv
		}
		return true
	}
}

// writesConst reports whether e is a write of a constant of the program
// (trace.ValueConst): it stores its recorded value in every interleaving
// in which it happens, so that value is known whatever its goroutine read
// before it. Only the value: where it writes is still the question of
// trace.AddrVaries.
func writesConst(e *trace.Event) bool {
	return e.Kind == trace.KindWrite && e.Flags&(trace.ValueConst|trace.HasValue) == trace.ValueConst|trace.HasValue
}

// mayDiffer returns, per window position, whether the event's goroutine
// took in a value in the window before it (a read, an atomic load or
// read-modify-write, a receive, or, for a goroutine started in the
// window, its parent before the go statement): under the approximation
// that refutes, which constrains only the reads a branch follows, that
// value may differ from the recorded one, and so may what the event
// writes, and where.
func (c *valueCtx) mayDiffer() []bool {
	if c.differ != nil {
		return c.differ
	}
	c.differ = make([]bool, len(c.evs))
	taken := map[trace.GoID]bool{}
	for i := range c.evs {
		e := &c.evs[i]
		c.differ[i] = taken[e.G]
		switch e.Kind {
		case trace.KindRead, trace.KindAtomicLoad, trace.KindAtomicRMW, trace.KindRecv:
			taken[e.G] = true
		case trace.KindFork:
			if taken[e.G] {
				taken[trace.GoID(e.Arg)] = true
			}
		}
	}
	return c.differ
}

// aliasFree returns the condition that no AddrVaries write that may have
// written elsewhere (its V false) comes before read r.
func (ps *preciseStage) aliasFree(enc *encoding, c *valueCtx, vv *valueVars, varies []int, r int) solve.Lit {
	s := enc.s
	var and []solve.Lit
	for _, w := range varies {
		switch {
		case c.before(r, w):
		case c.before(w, r):
			and = append(and, vv.V[w])
		default:
			and = append(and, s.Or(vv.V[w], c.lit(r, w)))
		}
	}
	return s.And(and...)
}

// readsOneOf returns the condition that read r reads a write w of the
// prefix (or the state at the window's start, w = -1) that accept
// accepts, with w's V if valid: the last write of r's variable before r.
// ok is false if no write can be. vv is nil under the approximation that
// refutes, where r may also read anything after a write whose address
// varies and whose goroutine took in a value before it (mayDiffer).
func (ps *preciseStage) readsOneOf(enc *encoding, c *valueCtx, vv *valueVars, r int, accept func(int) bool, valid bool) (solve.Lit, bool) {
	s := enc.s
	ws := c.writes[c.evs[r].Obj]
	if !valid && accept(-1) && !slices.ContainsFunc(ws, func(w int) bool { return w != r && !c.before(r, w) && !accept(w) }) {
		// Whichever write r reads (or none), it is accepted.
		return s.And(), true
	}
	var or []solve.Lit
	if accept(-1) {
		var and []solve.Lit
		possible := true
		for _, w := range ws {
			if c.before(r, w) {
				continue
			}
			if c.before(w, r) {
				possible = false
				break
			}
			and = append(and, c.lit(r, w))
		}
		if possible {
			or = append(or, s.And(and...))
		}
	}
	for _, w := range ws {
		if w == r || c.before(r, w) || !accept(w) {
			continue
		}
		var and []solve.Lit
		if valid && !writesConst(&c.evs[w]) {
			and = append(and, vv.V[w])
		}
		if !c.before(w, r) {
			and = append(and, c.lit(w, r))
		}
		possible := true
		for _, o := range ws {
			if o == w || c.before(o, w) || c.before(r, o) {
				continue
			}
			if c.before(w, o) && c.before(o, r) {
				possible = false
				break
			}
			and = append(and, s.Or(c.lit(o, w), c.lit(r, o)))
		}
		if possible {
			or = append(or, s.And(and...))
		}
	}
	if vv == nil {
		// Under the approximation that refutes (no V), a write whose
		// address varies and whose goroutine took in a value before it
		// may have written r's variable, any value: r reads anything if
		// such a write comes before it.
		differ := c.mayDiffer()
		for i := range c.evs {
			e := &c.evs[i]
			if i == r || !e.Kind.IsWrite() || e.Flags&trace.AddrVaries == 0 || !differ[i] || !c.in(i) || c.before(r, i) {
				continue
			}
			if c.before(i, r) {
				return s.And(), true
			}
			or = append(or, c.lit(i, r))
		}
	}
	if len(or) == 0 {
		return 0, false
	}
	return s.Or(or...), true
}
