package regions

import (
	"go/build"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/avcheck/avcheck/internal/intent"
	"golang.org/x/tools/go/ssa"
)

// This file is avcheck's one rule of intent: which groups of accesses are
// meant to run as one indivisible step. Proximity (BEST section V,
// shared/seeds/002_42168b820bf119f6.txt) proposes a region; evidence
// confirms it. Correct Go code is full of adjacent calls to methods that
// each take their own lock (c.Inc(); c.Get()), and none of them is meant
// to be atomic with the next. The static checks report a split only where
// Evidence links its accesses; the recorder writes each region's Intent
// into the trace, and the predictors report a violation of a region that
// has none at level predicted at most.

// Intent is the evidence that a region is meant to be atomic, with the
// two accesses it links for the kinds that follow a value (WriteBack,
// Branch, ReadPair, ReadBack).
type Intent struct {
	Evidence intent.Evidence
	From, To *Access
}

// Confirmed reports whether the intent makes its region intended.
func (in Intent) Confirmed() bool { return in.Evidence.Confirms() }

// Evidence returns the evidence that from and to, two accesses of f with
// from first, are meant to be one step: the value from reads is written
// by to (WriteBack), decides whether to runs (Branch), or is used together
// with the value to reads (ReadPair); or from updates a variable from
// itself and to reads it back to use it (ReadBack: o.refs--, then
// o.refs == 0 decides the free). intent.None if nothing links them. A
// synchronisation object (a channel, a mutex) gives no evidence: its
// value is not data; an atomic access does.
func (f *Func) Evidence(from, to *Access) intent.Evidence {
	if from.Instr == to.Instr || from.Sync && from.Atomic == "" || to.Sync && to.Atomic == "" || readsFunc(from) || readsFunc(to) || onFailurePath(to) ||
		viaSync(from) || viaSync(to) || libraryState(from) || libraryState(to) || f.unchanging(from) || f.unchanging(to) {
		return intent.None
	}
	if from.Kind == Write {
		if to.Kind == Read && from.stateKey() == to.stateKey() && f.before(from, to) && f.updatesItself(from) && f.used(to) {
			return intent.ReadBack
		}
		return intent.None
	}
	if isClaim(from) || from.Via != "" && from.Decides {
		// An atomic claim, or a call whose result reports what its own
		// critical section did with the state it read (a TryAcquire):
		// where that value goes shows no check of state.
		return intent.None
	}
	same := sameState(from, to)
	if same && (to.Kind == Write && to.Rechecked || to.Kind == Read) || f.revalidated(from, to) || f.owned(from, to) {
		// The later access checks the state again in its own critical
		// section (double-checked locking), or is itself a read of what
		// was checked: what it does rests on that, not on the first
		// read, which may go stale harmlessly. Or the code between the
		// two sections holds a flag that keeps other runs of it out.
		return intent.None
	}
	if storesResult(from, to) || !same && storesCall(to) {
		return intent.None
	}
	data, control := f.Feeds(from, to)
	switch {
	case data:
		return intent.WriteBack
	case control && to.Kind == Write && to.Claimed:
		// The act's own section claims a flag: however stale the check,
		// one act ever passes.
		return intent.None
	case control && f.assertsOnly(from, to):
		return intent.None
	case control:
		return intent.Branch
	case to.Kind == Read && f.usedTogether(from, to):
		return intent.ReadPair
	}
	return intent.None
}

// libraryState reports whether a is made inside a call of the standard
// library on one of its package-level variables (time.Now's startNano and
// Local, math/rand's global source): the library's own configuration and
// caches, not the program's data, so what is read there says nothing of
// what the code between is meant to do with the program's state.
func libraryState(a *Access) bool {
	if a.Via == "" || a.Path.Root.Kind != RootGlobal {
		return false
	}
	pkg := a.Path.Root.ID
	if i := strings.LastIndexByte(pkg, '.'); i >= 0 {
		pkg = pkg[:i]
	}
	return isStd(pkg)
}

// stdPkgs caches isStd's answers.
var stdPkgs sync.Map // import path -> bool

// isStd reports whether the package of import path pkg is one of the
// standard library's: its first element has no dot and its directory is
// in GOROOT (a module whose path has no dot is not).
func isStd(pkg string) bool {
	if v, ok := stdPkgs.Load(pkg); ok {
		return v.(bool)
	}
	first, _, _ := strings.Cut(pkg, "/")
	std := false
	if !strings.Contains(first, ".") && build.Default.GOROOT != "" {
		fi, err := os.Stat(filepath.Join(build.Default.GOROOT, "src", filepath.FromSlash(pkg)))
		std = err == nil && fi.IsDir()
	}
	stdPkgs.Store(pkg, std)
	return std
}

// unchanging reports whether a reads a variable that a closure captured
// and that nothing writes once the closure is made: a value set once
// before the goroutines start (interval := 200 * time.Millisecond), which
// every read sees the same, so no interleaving can change what is read;
// a field that keeps the value its object was built with; or a
// package-level variable that keeps the value it was initialized with.
func (f *Func) unchanging(a *Access) bool {
	if n := len(a.Path.Fields); a.Kind == Read && a.Via == "" && a.Var != nil && n > 0 && a.Path.Fields[n-1] == a.Var.Name() &&
		f.flows != nil && f.flows.fa.ps.fixed != nil && f.flows.fa.ps.fixed.Fixed(a.Var) {
		// A field that keeps the value its object was built with
		// (fixed.go): the field itself, not what it leads to (a map's
		// elements, which change as the map it holds does).
		return true
	}
	if a.Kind == Read && a.Path.Root.Kind == RootGlobal && len(a.Path.Fields) == 0 &&
		f.flows != nil && f.flows.fa.ps.fixed != nil && f.flows.fa.ps.fixed.FixedGlobal(a.Path.Root.ID) {
		// A package-level variable that keeps the value its package's
		// initialization gave it (fixed.go), read here or in a call.
		return true
	}
	if a.Kind != Read || a.Via != "" || len(a.Path.Fields) > 0 || a.Path.Root.Kind != RootFree || f.Fn == nil {
		return false
	}
	// Asked of each pair an access is in: the answer, which looks at the
	// whole enclosing function, is kept.
	c := f.flows
	if v, ok := c.unchanging[a]; ok {
		return v
	}
	if c.unchanging == nil {
		c.unchanging = make(map[*Access]bool)
	}
	v := unchangingFree(f.Fn, a.Path.Root.Index, 0)
	c.unchanging[a] = v
	return v
}

// unchangingFree reports whether fn's free variable i is only read, in fn
// and in the closures it is captured by again, and is, where fn's
// closures are made, a local stored once before each of them.
func unchangingFree(fn *ssa.Function, i, depth int) bool {
	if depth > 4 || i >= len(fn.FreeVars) || fn.Parent() == nil {
		return false
	}
	if !onlyLoaded(fn.FreeVars[i]) {
		return false
	}
	made := false
	for _, b := range fn.Parent().Blocks {
		for _, in := range b.Instrs {
			mc, ok := in.(*ssa.MakeClosure)
			if !ok || mc.Fn != fn {
				continue
			}
			made = true
			switch v := mc.Bindings[i].(type) {
			case *ssa.FreeVar:
				if !unchangingFree(fn.Parent(), slices.Index(fn.Parent().FreeVars, v), depth+1) {
					return false
				}
			case *ssa.Alloc:
				if !storedOnceBefore(v, mc) {
					return false
				}
			default:
				return false
			}
		}
	}
	return made
}

// onlyLoaded reports whether the address v is only loaded from, or
// captured by closures that only load from it.
func onlyLoaded(v ssa.Value) bool {
	for _, r := range *v.Referrers() {
		if !loads(r, v) {
			return false
		}
	}
	return true
}

// loads reports whether instruction r, which refers to the address v,
// only loads from it, or captures it in a closure that only loads from
// it.
func loads(r ssa.Instruction, v ssa.Value) bool {
	switch r := r.(type) {
	case *ssa.UnOp:
		return r.Op == token.MUL
	case *ssa.MakeClosure:
		for j, b := range r.Bindings {
			if b == v && !onlyLoaded(r.Fn.(*ssa.Function).FreeVars[j]) {
				return false
			}
		}
		return true
	case *ssa.DebugRef:
		return true
	}
	return false
}

// storedOnceBefore reports whether the local alloc is stored to once, by
// an instruction that runs before mc in the same block or in a block that
// dominates mc's, and is otherwise only loaded or captured by closures
// that only load it.
func storedOnceBefore(alloc *ssa.Alloc, mc *ssa.MakeClosure) bool {
	var store *ssa.Store
	for _, r := range *alloc.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Addr == alloc && store == nil {
			store = st
		} else if !loads(r, alloc) {
			return false
		}
	}
	if store == nil {
		return false
	}
	sb, mb := store.Block(), mc.Block()
	if sb == mb {
		return slices.Index(sb.Instrs, ssa.Instruction(store)) < slices.Index(sb.Instrs, ssa.Instruction(mc))
	}
	return sb.Dominates(mb)
}

// viaSync reports whether a is made inside a call of the runtime
// (runtime.GOMAXPROCS) or of a synchronisation type of package sync
// (wg.Add, mu.Lock): what it touches there is the scheduler's or the
// synchronisation's own state, not the program's data, so a value read
// there and given to wg.Add is no evidence that the code between is one
// step. A sync.Map's methods stay data: a Load then a Store is the
// check-then-act that LoadOrStore exists for.
func viaSync(a *Access) bool {
	if a.Via == "" {
		return false
	}
	if strings.HasPrefix(a.Via, "runtime.") || strings.HasPrefix(a.Via, "(*runtime.") {
		return true
	}
	for _, p := range syncVias {
		if strings.HasPrefix(a.Via, p) {
			return true
		}
	}
	return false
}

// syncVias are the prefixes of viaSync's calls of package sync's types
// (asked for every pair of accesses the rule of intent checks, so made
// once).
var syncVias = []string{"(*sync.WaitGroup)", "(*sync.Mutex)", "(*sync.RWMutex)", "(*sync.Once)", "(*sync.Cond)"}

// onFailurePath reports whether a is made on a path that reports a
// failure and ends the test or the program: its block, or a block it
// jumps to unconditionally, calls t.Fatalf, t.Errorf, t.Skip,
// log.Fatal, log.Panic or os.Exit, or panics. A value that decides such
// an access, or that the report prints, is checked as an assertion (if
// got != want { t.Fatalf(...) }, a poll's deadline), not acted on: a
// stale check only reports late or wrongly. As with a load that decides
// a store only by panicking (atomicact), this is no evidence that the
// check and the access are one step.
func onFailurePath(a *Access) bool {
	if a.Instr == nil || a.Instr.Block() == nil {
		return false
	}
	return failureBlock(a.Instr.Block())
}

// assertsOnly reports whether every branch through which the value from
// read decides whether to runs has a failure path as its other way
// (failureBlock): if c.status != acquired { panic(...) }; act(). The
// read asserts the caller's protocol, as a misuse check does; in a run
// that keeps it, the act always runs, so the check is not acted on, as
// with onFailurePath and atomicact's load that decides a store only by
// panicking.
func (f *Func) assertsOnly(from, to *Access) bool {
	brs := f.Deciders(from, to)
	for _, br := range brs {
		succs := br.Block().Succs
		if len(succs) != 2 || !failureBlock(succs[0]) && !failureBlock(succs[1]) {
			return false
		}
	}
	return len(brs) > 0
}

// failureBlock reports whether block b, or a block it jumps to
// unconditionally, reports a failure and ends the test or the program
// (onFailurePath).
func failureBlock(b *ssa.BasicBlock) bool {
	for range 8 {
		for _, in := range b.Instrs {
			if _, ok := in.(*ssa.Panic); ok || failureCall(in) {
				return true
			}
		}
		if n := len(b.Instrs); n == 0 || len(b.Succs) != 1 {
			return false
		} else if _, ok := b.Instrs[n-1].(*ssa.Jump); !ok {
			return false
		}
		b = b.Succs[0]
	}
	return false
}

// failureCall reports whether in calls a function that reports a failure
// and ends the test or the program.
func failureCall(in ssa.Instruction) bool {
	call, ok := in.(ssa.CallInstruction)
	if !ok {
		return false
	}
	var obj types.Object
	if c := call.Common(); c.IsInvoke() {
		obj = c.Method
	} else if fn := c.StaticCallee(); fn != nil {
		obj = fn.Object()
	}
	if obj == nil || obj.Pkg() == nil {
		return false
	}
	switch obj.Pkg().Path() {
	case "testing":
		switch obj.Name() {
		case "Fatal", "Fatalf", "Error", "Errorf", "Fail", "FailNow", "Skip", "Skipf", "SkipNow":
			return true
		}
	case "log":
		switch obj.Name() {
		case "Fatal", "Fatalf", "Fatalln", "Panic", "Panicf", "Panicln":
			return true
		}
	case "os":
		return obj.Name() == "Exit"
	}
	return false
}

// sameState reports whether a and b access the same state, or one of
// them a container (a map, a slice) and the other its elements: a lookup
// c.m[k] reads the field c.m and the element c.m[], and a check of
// either is a check of the entry.
func sameState(a, b *Access) bool {
	ka, kb := a.stateKey(), b.stateKey()
	if len(ka) > len(kb) {
		ka, kb = kb, ka
	}
	return ka == kb || strings.HasPrefix(kb, ka) && strings.HasPrefix(kb[len(ka):], ".[]")
}

// isClaim reports whether a is an atomic read-modify-write (Add, Swap,
// CompareAndSwap, And, Or): what it returns is a value it claimed in one
// indivisible step, such as a fresh id, which no other goroutine gets,
// so where that value goes later shows no intent.
func isClaim(a *Access) bool {
	switch a.Atomic {
	case "Add", "Swap", "CompareAndSwap", "And", "Or":
		return true
	}
	return false
}

// revalidated reports whether, in to's own critical section and before
// to, a read of the state from read decides whether to runs: the check
// made again under the lock (if le.leaseMap[id] == nil { return }) is
// what to rests on.
func (f *Func) revalidated(from, to *Access) bool {
	for _, h := range to.Held {
		for _, r := range f.inCS(h.CS) {
			if r == from || r == to || r.Kind != Read || !sameState(r, from) {
				continue
			}
			if _, control := f.Feeds(r, to); control {
				return true
			}
		}
	}
	return false
}

// owned reports whether from's critical section takes a flag that to's
// critical section of the same lock gives back: a read of the flag there
// decides a write of it (if cr.inRead { panic(...) }; cr.inRead = true),
// and to's section writes it again (cr.inRead = false). Between the two
// sections the flag keeps every other run of that code out, as a lock
// would, so what from checked is still what to acts on.
func (f *Func) owned(from, to *Access) bool {
	for _, h := range from.Held {
		th, ok := to.HeldLock(h.Lock.Key())
		if !ok || th.CS == h.CS {
			continue
		}
		for _, r := range f.flagsBetween(h.CS, th.CS) {
			if r != from && !sameState(r, from) {
				return true
			}
		}
	}
	return false
}

// flagsBetween returns the reads of critical section cs that claim a
// flag (claims) that critical section next writes.
func (f *Func) flagsBetween(cs, next int) []*Access {
	c := f.flows
	k := [2]int{cs, next}
	if rs, ok := c.flags[k]; ok {
		return rs
	}
	var out []*Access
	for _, r := range f.inCS(cs) {
		if r.Kind != Read {
			continue
		}
		for _, w := range f.inCS(next) {
			if w.Kind == Write && sameState(w, r) {
				if f.claims(r, cs) {
					out = append(out, r)
				}
				break
			}
		}
	}
	if c.flags == nil {
		c.flags = map[[2]int][]*Access{}
	}
	c.flags[k] = out
	return out
}

// claims reports whether the read r decides a write of the same state in
// critical section cs.
func (f *Func) claims(r *Access, cs int) bool {
	for _, w := range f.inCS(cs) {
		if w.Kind == Write && sameState(w, r) {
			if _, control := f.Feeds(r, w); control {
				return true
			}
		}
	}
	return false
}

// inCS returns the accesses of f made in critical section cs.
func (f *Func) inCS(cs int) []*Access {
	c := f.flows
	if c.csAccesses == nil {
		c.csAccesses = map[int][]*Access{}
		for _, a := range f.Accesses {
			for _, h := range a.Held {
				c.csAccesses[h.CS] = append(c.csAccesses[h.CS], a)
			}
		}
	}
	return c.csAccesses[cs]
}

// storesResult reports whether to stores the very result of the call
// that from is made through (got, _ = idx.GetOrCreate(k)): the caller
// keeps what the callee returned, and how the callee got it is the
// callee's own regions' business.
func storesResult(from, to *Access) bool {
	call, ok := from.Instr.(*ssa.Call)
	return ok && from.Via != "" && to.Kind == Write && slices.ContainsFunc(to.srcs, func(v ssa.Value) bool { return callOf(v) == call })
}

// storesCall reports whether to stores what a call returned: a value
// read elsewhere reaches it only through the call, which avcheck assumes
// returns what it is given (idx.GetOrCreate(k) is given idx), so that
// only a write back to the same state counts as evidence then.
func storesCall(to *Access) bool {
	return to.Kind == Write && slices.ContainsFunc(to.srcs, func(v ssa.Value) bool { return callOf(v) != nil })
}

// callOf returns the call whose result, or one of whose results, v is;
// nil if v is none.
func callOf(v ssa.Value) *ssa.Call {
	if ex, ok := v.(*ssa.Extract); ok {
		v = ex.Tuple
	}
	call, _ := v.(*ssa.Call)
	return call
}

// readsFunc reports whether a reads a function value (cc.dial, then
// called) or an interface with methods (ls.driver, whose Remove is then
// called): a handle the code calls, not data it checks or updates, so
// neither what the call returns nor whether the read runs shows intent.
func readsFunc(a *Access) bool {
	if a.Kind != Read || len(a.seeds) == 0 {
		return false
	}
	for _, s := range a.seeds {
		switch t := s.Type().Underlying().(type) {
		case *types.Signature:
		case *types.Interface:
			if t.NumMethods() == 0 {
				return false // any: a value, not a handle
			}
		default:
			return false
		}
		if !onlyCalled(s) {
			return false // compared (ctx == nil) or passed on: data
		}
	}
	return true
}

// onlyCalled reports whether every use of v calls it, or calls a method
// of it.
func onlyCalled(v ssa.Value) bool {
	refs := v.Referrers()
	if refs == nil {
		return false
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.Call:
			if r.Call.Value != v {
				return false
			}
		case *ssa.DebugRef:
		default:
			return false
		}
	}
	return true
}

// before reports whether a runs before b: b's instruction can follow a's,
// and what b reads does not make what a writes (r.SetLo(r.Lo() + d)
// reads before it writes, though the call to SetLo comes first in the
// source).
func (f *Func) before(a, b *Access) bool {
	if !Reaches(a.Instr, b.Instr) {
		return false
	}
	if b.Kind == Read {
		if data, _ := f.Feeds(b, a); data {
			return false
		}
	}
	return true
}

// updatesItself reports whether the write w stores a value made from a
// read of the same state in f (c.n--, c.n = c.n + d).
func (f *Func) updatesItself(w *Access) bool {
	c := f.flows
	if v, ok := c.selfUpdate[w]; ok {
		return v
	}
	if c.selfUpdate == nil {
		c.selfUpdate = map[*Access]bool{}
	}
	c.selfUpdate[w] = false
	key := w.stateKey()
	for _, r := range f.Accesses {
		if r.Kind == Read && r.stateKey() == key && r.Instr != w.Instr {
			if data, _ := f.Feeds(r, w); data {
				c.selfUpdate[w] = true
				break
			}
		}
	}
	return c.selfUpdate[w]
}

// used reports whether the value the read r sees decides a branch, is
// returned, or is written to other state f accesses.
func (f *Func) used(r *Access) bool {
	c := f.flows
	if v, ok := c.used[r]; ok {
		return v
	}
	if c.used == nil {
		c.used = map[*Access]bool{}
	}
	fl := f.flowOf(r)
	u := len(fl.conds) > 0 || len(fl.results) > 0
	for _, w := range f.Accesses {
		if u {
			break
		}
		// A write back to the state read is an update of its own
		// (n += d; ...; n++): two such updates need not be one step,
		// whatever runs between them.
		if w.Kind == Write && w.Instr != r.Instr && w.stateKey() != r.stateKey() {
			u, _ = fl.feeds(w)
		}
	}
	c.used[r] = u
	return u
}

// usedTogether reports whether the values a and b read meet in one
// computation: both operands of an operation (a comparison, arithmetic),
// or results returned together. A call's arguments are not such a meeting
// (log.Print(a, b) only passes them on), though what a call returns is
// taken to carry what it was given.
func (f *Func) usedTogether(a, b *Access) bool {
	fa, fb := f.flowOf(a), f.flowOf(b)
	if len(fa.vals) == 0 || len(fb.vals) == 0 {
		return false
	}
	// A read through a pointer the other read (l := m[id]; l.TTL) is one
	// value followed further, not a pair.
	for _, v := range b.seeds {
		if fa.vals[v] {
			return false
		}
	}
	for _, v := range a.seeds {
		if fb.vals[v] {
			return false
		}
	}
	for v := range fb.vals {
		refs := v.Referrers()
		if refs == nil {
			continue
		}
		for _, instr := range *refs {
			switch in := instr.(type) {
			case *ssa.BinOp:
				if fa.vals[in.X] && fb.vals[in.Y] || fa.vals[in.Y] && fb.vals[in.X] {
					return true
				}
			case *ssa.Return:
				for _, r := range in.Results {
					if fa.vals[r] {
						return true
					}
				}
			}
		}
	}
	return false
}

// evidenceWindow bounds how many later accesses of a stretch each access
// is paired with when evidence is looked for: the nearest ones, so that a
// long function costs time linear in its accesses.
const evidenceWindow = 64

// confirmed returns the regions that evidence confirms in a stretch of a
// function's accesses with no operation that orders goroutines between
// them: each stretch from an access to the later one it is linked with,
// overlapping stretches merged, as a region of its own with the first
// evidence found in it. Evidence is not bounded by -maxd: a value read
// and written back seven lines later is one update all the same.
func (fa *funcAnalysis) confirmed(seg []*Access) []*Region {
	type span struct {
		pos, end token.Pos
		in       Intent
	}
	var spans []span
	for i, a := range seg {
		for _, b := range seg[i+1 : min(len(seg), i+1+evidenceWindow)] {
			if a.Pos == b.Pos {
				// One call's accesses, or one statement's (c.n++): the
				// callee's regions, or the statement itself, hold them.
				continue
			}
			// Source order need not be the order of execution
			// (r.SetLo(r.Lo() + d) reads before it writes): Evidence
			// follows the values, so both orders are asked.
			for _, p := range [2][2]*Access{{a, b}, {b, a}} {
				if ev := fa.info.Evidence(p[0], p[1]); ev.Confirms() {
					spans = append(spans, span{a.Pos, b.Pos, Intent{ev, p[0], p[1]}})
					break
				}
			}
		}
	}
	// spans are in the order of their first access, seg's order.
	var out []*Region
	for _, s := range spans {
		if n := len(out); n > 0 && s.pos <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.end)
			continue
		}
		out = append(out, &Region{Kind: Proximity, Func: fa.fn, Pos: s.pos, End: s.end, Intent: s.in})
	}
	for _, r := range out {
		for _, a := range seg {
			if r.Pos <= a.Pos && a.Pos <= r.End {
				r.Accesses = append(r.Accesses, a)
			}
		}
	}
	return out
}

// nestProposals widens each proposal (a region without evidence) that
// overlaps a confirmed region of the function to contain it, so that the
// regions of a function nest: the recorder gives an event to its
// outermost confirmed region, and a proposal around it groups what a
// goroutine does there for the predictors, which take another
// goroutine's accesses between the two of a region as one unit (an
// atomic-set violation needs no intent from the goroutine that
// interferes, only from the one whose region it breaks).
func nestProposals(rs []*Region) []*Region {
	for changed := true; changed; {
		changed = false
		for _, p := range rs {
			if p.Intent.Confirmed() {
				continue
			}
			for _, c := range rs {
				if c == p || !c.Intent.Confirmed() || c.End < p.Pos || p.End < c.Pos {
					continue
				}
				if c.Pos < p.Pos || c.End > p.End {
					p.Pos, p.End = min(p.Pos, c.Pos), max(p.End, c.End)
					changed = true
				}
			}
		}
	}
	var out []*Region
	for _, p := range rs {
		if p.Intent.Confirmed() || !coveredByConfirmed(p, rs) {
			out = append(out, p)
		}
	}
	return out
}

// coveredByConfirmed reports whether the confirmed regions that overlap
// p, joined as the recorder joins them, cover it: p then groups nothing
// they do not, and is left out.
func coveredByConfirmed(p *Region, rs []*Region) bool {
	var cs []*Region
	for _, c := range rs {
		if c != p && c.Intent.Confirmed() && c.Pos <= p.End && p.Pos <= c.End {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].Pos < cs[j].Pos })
	reach := p.Pos
	for _, c := range cs {
		if c.Pos > reach {
			return false
		}
		reach = max(reach, c.End)
	}
	return len(cs) > 0 && reach >= p.End
}
