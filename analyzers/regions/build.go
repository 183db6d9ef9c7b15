package regions

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"

	"github.com/avcheck/avcheck/analyzers/annotation"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

// passState is the per-run state of the analyzer: the functions analysed
// so far, so that in-package callees are summarised before their callers.
type passState struct {
	pass  *analysis.Pass
	cfg   *Config
	ann   *annotation.Set
	funcs map[*ssa.Function]*Func
	exprs map[token.Pos]ast.Expr
	// unevaluated holds the spans of the range expressions that are not
	// evaluated (unevaluatedRanges).
	unevaluated [][2]token.Pos
	// linked maps the package's functions that //go:linkname links
	// elsewhere to their targets.
	linked map[string]string
	// fixed tells the fields that keep the value their object was
	// built with (fixed.go).
	fixed *fixedFields
}

// funcAnalysis is the state of analysing one function.
type funcAnalysis struct {
	ps   *passState
	fn   *ssa.Function
	pkg  *types.Package
	info *Func

	nextCS       int
	heldBefore   map[ssa.Instruction]lockState
	mergedCS     map[string]int // by the acquisitions merged (locks.go)
	csOrigins    map[int][]int
	acquireCS    map[callLock]int
	acquireAt    map[int]acquisition
	releaseAt    map[int][]token.Pos
	deferredKeys map[string]bool
	// deferredAcquireKeys are the locks a deferred Lock or RLock takes
	// again on the way out.
	deferredAcquireKeys map[string]bool
	unheldReleases      []Path
	condLocks           []condLock
	callCS              map[callLock]int
	callResults         map[*ssa.Call][][]*Access // per result, the mapped reads that flow into it
	decidersOf          map[*ssa.BasicBlock][]*ssa.If
	// locals maps the local roots of paths (Root.ID) to their values, and
	// escapes holds their escape points, once asked (escape.go).
	locals  map[string]ssa.Value
	escapes map[ssa.Value][]ssa.Instruction
}

type callLock struct {
	call ssa.Instruction
	lock string
}

// acquisition is where a critical section begins, and of which lock.
type acquisition struct {
	instr ssa.Instruction
	lock  Path
}

// maxSummaryAccesses bounds a Summary, so that facts stay small however
// deep the call graph: the first accesses in instruction order are kept.
const maxSummaryAccesses = 64

// analyze returns what is known of fn, analysing it (and, first, the
// in-package functions it calls) if need be. A recursive call sees the
// callee's Summary as empty.
func (ps *passState) analyze(fn *ssa.Function) *Func {
	if f, ok := ps.funcs[fn]; ok {
		return f
	}
	f := &Func{Fn: fn}
	ps.funcs[fn] = f
	fa := &funcAnalysis{
		ps:                  ps,
		fn:                  fn,
		pkg:                 ps.pass.Pkg,
		info:                f,
		heldBefore:          map[ssa.Instruction]lockState{},
		mergedCS:            map[string]int{},
		csOrigins:           map[int][]int{},
		acquireCS:           map[callLock]int{},
		acquireAt:           map[int]acquisition{},
		releaseAt:           map[int][]token.Pos{},
		deferredKeys:        map[string]bool{},
		deferredAcquireKeys: map[string]bool{},
		callCS:              map[callLock]int{},
		callResults:         map[*ssa.Call][][]*Access{},
		decidersOf:          map[*ssa.BasicBlock][]*ssa.If{},
		locals:              map[string]ssa.Value{},
		escapes:             map[ssa.Value][]ssa.Instruction{},
	}
	f.flows = &flowCache{fa: fa, byRead: map[*Access]*flow{}}
	fa.computeLocks()
	fa.collect()
	fa.markRechecked()
	fa.markDecides()
	f.Summary = fa.summarize()
	f.Regions = fa.regions()
	fa.release()
	return f
}

// release drops the working state that only the analysis of the function
// itself needs, keeping what Feeds uses later. A driver such as avcheck's
// standalone mode keeps every package's Result until it ends.
func (fa *funcAnalysis) release() {
	fa.heldBefore = nil
	fa.mergedCS = nil
	fa.csOrigins = nil
	fa.acquireCS = nil
	fa.acquireAt = nil
	fa.releaseAt = nil
	fa.deferredKeys = nil
	fa.deferredAcquireKeys = nil
	fa.unheldReleases = nil
	fa.condLocks = nil
	fa.callCS = nil
}

// calleeSummary returns the static callee of c and its Summary: computed
// here for a function of this package, imported as a Fact otherwise.
func (fa *funcAnalysis) calleeSummary(c *ssa.CallCommon) (*ssa.Function, *Summary) {
	callee := c.StaticCallee()
	if callee == nil {
		return nil, nil
	}
	if o := callee.Origin(); o != nil {
		callee = o
	}
	if callee.Pkg != nil && callee.Pkg.Pkg == fa.pkg || callee.Object() == nil {
		if len(callee.Blocks) == 0 {
			return callee, nil
		}
		return callee, fa.ps.analyze(callee).Summary
	}
	var s Summary
	if obj := funcObject(callee); obj != nil && fa.ps.pass.ImportObjectFact(obj, &s) {
		return callee, &s
	}
	return callee, nil
}

// mapPath turns a path of callee's Summary into a path of this function,
// through the arguments of the call (and the bindings of a closure).
func (fa *funcAnalysis) mapPath(c *ssa.CallCommon, callee *ssa.Function, p Path) (Path, bool) {
	var base Path
	switch p.Root.Kind {
	case RootGlobal:
		base = Path{Root: p.Root}
		if pkgPath, name := splitGlobal(p.Root.ID); pkgPath == fa.pkg.Path() {
			base.Root.Name = name
		}
	case RootParam:
		if p.Root.Index >= len(c.Args) {
			return Path{}, false
		}
		b, ok := fa.pathOf(c.Args[p.Root.Index])
		if !ok {
			return Path{}, false
		}
		base = b
	case RootFree:
		mc, ok := c.Value.(*ssa.MakeClosure)
		if !ok || p.Root.Index >= len(mc.Bindings) {
			return Path{}, false
		}
		b, ok := fa.bindingPath(mc.Bindings[p.Root.Index])
		if !ok {
			return Path{}, false
		}
		base = b
	default:
		return Path{}, false
	}
	fields := slices.Concat(base.Fields, p.Fields)
	return Path{Root: base.Root, Fields: fields}, true
}

func splitGlobal(id string) (pkgPath, name string) {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '.' {
			return id[:i], id[i+1:]
		}
	}
	return "", id
}

// locate finds the source expression at the first of the candidate
// positions that starts one, for an access's Pos and Expr.
func (fa *funcAnalysis) locate(p Path, candidates ...token.Pos) (token.Pos, string) {
	for _, c := range candidates {
		if e, ok := fa.ps.exprs[c]; ok {
			return e.Pos(), exprString(e)
		}
	}
	for _, c := range candidates {
		if c.IsValid() {
			return c, p.String()
		}
	}
	return fa.fn.Pos(), p.String()
}

// addrPos is the position of an address for locating an access: that of
// a field or element selection, but not a package-level variable's, which
// is its declaration.
func addrPos(v ssa.Value) token.Pos {
	if _, ok := v.(*ssa.Global); ok {
		return token.NoPos
	}
	return v.Pos()
}

// exprString is the source expression of an access, whole: the recorders
// evaluate it (Access.Expr). Messages shorten it (Short).
func exprString(e ast.Expr) string { return types.ExprString(e) }

// Short returns expr, an Access's Expr, cut to 60 bytes for a message.
func Short(expr string) string {
	if len(expr) > 60 {
		return expr[:57] + "..."
	}
	return expr
}

func (fa *funcAnalysis) held(instr ssa.Instruction) []Held {
	return fa.heldBefore[instr]
}

func (fa *funcAnalysis) addAccess(a *Access) {
	if a.Instr != nil {
		a.CondHeld = fa.condHeld(a.Instr)
	}
	fa.info.Accesses = append(fa.info.Accesses, a)
}

// collect records every access to shared state and every operation that
// orders goroutines, in instruction order.
func (fa *funcAnalysis) collect() {
	for _, b := range fa.fn.Blocks {
		for _, instr := range b.Instrs {
			if _, reached := fa.heldBefore[instr]; !reached {
				continue // unreachable code
			}
			fa.collectInstr(instr)
		}
	}
	sort.SliceStable(fa.info.SyncOps, func(i, j int) bool { return fa.info.SyncOps[i].Pos < fa.info.SyncOps[j].Pos })
}

func (fa *funcAnalysis) collectInstr(instr ssa.Instruction) {
	switch in := instr.(type) {
	case *ssa.UnOp:
		switch in.Op {
		case token.MUL:
			if fa.ps.inUnevaluated(in.Pos()) {
				return // SSA's load of an array that a range does not evaluate
			}
			if p, ok := fa.sharedPath(in.X, in); ok {
				pos, expr := fa.locate(p, in.Pos(), addrPos(in.X))
				fa.addAccess(&Access{Path: p, Kind: Read, Sync: isSyncType(in.Type()), Pos: pos, Expr: expr,
					Var: varOf(in.X), Held: fa.held(in), Instr: in, seeds: []ssa.Value{in}})
			}
		case token.ARROW:
			fa.syncOp(in.Pos(), "channel receive")
		}
	case *ssa.Store:
		if p, ok := fa.sharedPath(in.Addr, in); ok {
			pos, expr := fa.locate(p, in.Pos(), addrPos(in.Addr))
			fa.addAccess(&Access{Path: p, Kind: Write, Sync: isSyncType(in.Val.Type()), Pos: pos, Expr: expr,
				Var: varOf(in.Addr), Held: fa.held(in), Instr: in, srcs: []ssa.Value{in.Val}})
		}
	case *ssa.MapUpdate:
		if p, ok := fa.sharedPath(in.Map, in); ok {
			p = p.with(elem)
			pos, expr := fa.locate(p, in.Pos())
			fa.addAccess(&Access{Path: p, Kind: Write, Pos: pos, Expr: expr, Var: containerVar(in.Map),
				Held: fa.held(in), Instr: in, srcs: []ssa.Value{in.Key, in.Value}})
		}
	case *ssa.Lookup:
		if _, isMap := in.X.Type().Underlying().(*types.Map); isMap {
			if p, ok := fa.sharedPath(in.X, in); ok {
				p = p.with(elem)
				pos, expr := fa.locate(p, in.Pos())
				fa.addAccess(&Access{Path: p, Kind: Read, Pos: pos, Expr: expr, Var: containerVar(in.X),
					Held: fa.held(in), Instr: in, seeds: []ssa.Value{in}})
			}
		}
	case *ssa.Range:
		if _, isMap := in.X.Type().Underlying().(*types.Map); isMap {
			if p, ok := fa.sharedPath(in.X, in); ok {
				p = p.with(elem)
				pos, expr := fa.locate(p, in.Pos(), addrPos(in.X))
				fa.addAccess(&Access{Path: p, Kind: Read, Pos: pos, Expr: expr,
					Held: fa.held(in), Instr: in, seeds: []ssa.Value{in}})
			}
		}
	case *ssa.Send:
		fa.syncOp(in.Pos(), "channel send")
	case *ssa.Select:
		fa.syncOp(in.Pos(), "select")
	case *ssa.Go:
		fa.syncOp(in.Pos(), "go statement")
	case *ssa.Call:
		fa.collectCall(in)
	case *ssa.Defer:
		fa.collectDeferred(in)
	}
}

// collectDeferred records a deferred closure, with the locks it runs
// with: those held at the defer statement whose unlock was deferred
// before it, on every path. Deferred calls run last in, first out, so
//
//	mu.Lock()
//	defer mu.Unlock()
//	defer func() { ... }() // runs before the Unlock: mu is held
//
// A lock held at the defer but unlocked by the function itself is not
// held when the closure runs.
func (fa *funcAnalysis) collectDeferred(d *ssa.Defer) {
	c := d.Common()
	var fn *ssa.Function
	var bindings []*Path
	switch v := c.Value.(type) {
	case *ssa.MakeClosure:
		fn, bindings = v.Fn.(*ssa.Function), fa.bindingPaths(v)
	case *ssa.Function:
		if v.Parent() != fa.fn {
			return // a named function: its callers are not known
		}
		fn = v
	default:
		return
	}
	var held []Held
	for _, h := range fa.held(d) {
		if fa.unlockDeferredBefore(d, h.Lock.Key()) {
			held = append(held, Held{Lock: h.Lock, Read: h.Read})
		}
	}
	fa.info.Deferred = append(fa.info.Deferred, ClosureArg{Fn: fn, Bindings: bindings, Held: held})
}

// unlockDeferredBefore reports whether a deferred unlock of the lock with
// the key is registered before d on every path to it.
func (fa *funcAnalysis) unlockDeferredBefore(d *ssa.Defer, key string) bool {
	for _, b := range fa.fn.Blocks {
		for _, instr := range b.Instrs {
			u, ok := instr.(*ssa.Defer)
			if !ok || u == d {
				continue
			}
			if o, _ := classify(u.Common()); o != opUnlock && o != opRUnlock {
				continue
			}
			p, ok := fa.lockTarget(u.Common())
			if !ok || p.Key() != key {
				continue
			}
			if Dominates(u, d) {
				return true
			}
		}
	}
	return false
}

// Dominates reports whether instruction x runs before y on every path
// to y.
func Dominates(x, y ssa.Instruction) bool {
	if x.Block() != y.Block() {
		return x.Block().Dominates(y.Block())
	}
	for _, instr := range x.Block().Instrs {
		switch instr {
		case x:
			return true
		case y:
			return false
		}
	}
	return false
}

func (fa *funcAnalysis) syncOp(pos token.Pos, what string) {
	if pos.IsValid() {
		fa.info.SyncOps = append(fa.info.SyncOps, SyncOp{Pos: pos, What: what})
	}
}

func (fa *funcAnalysis) collectCall(call *ssa.Call) {
	c := call.Common()
	o, atomicOp := classify(c)
	if o == opOther {
		if name := fa.ps.linkedAtomic(c); name != "" {
			o, atomicOp = opAtomic, name
		}
	}
	if name := syncOpName(o); name != "" {
		fa.syncOp(call.Pos(), name)
	}
	arg := func(i int) (Path, bool) {
		if i >= len(c.Args) {
			return Path{}, false
		}
		return fa.sharedPath(c.Args[i], call)
	}
	access := func(p Path, kind AccessKind) *Access {
		pos, expr := fa.locate(p, call.Pos())
		a := &Access{Path: p, Kind: kind, Pos: pos, Expr: expr, Held: fa.held(call), Instr: call}
		fa.addAccess(a)
		return a
	}
	switch o {
	case opAtomic:
		if p, ok := arg(0); ok {
			kind := Write
			if atomicOp == "Load" {
				kind = Read
			}
			a := access(p, kind)
			a.Atomic, a.Sync, a.Var = atomicOp, true, varOf(c.Args[0])
			a.seeds = []ssa.Value{call}
			a.srcs = c.Args[1:]
		}
	case opDelete:
		if p, ok := arg(0); ok {
			a := access(p.with(elem), Write)
			a.srcs, a.Var = c.Args[1:], containerVar(c.Args[0])
		}
	case opLen:
		if _, isMap := c.Args[0].Type().Underlying().(*types.Map); isMap {
			if p, ok := arg(0); ok {
				access(p.with(elem), Read).seeds = []ssa.Value{call}
			}
		}
	case opCopy:
		if p, ok := arg(1); ok {
			access(p.with(elem), Read)
		}
		if p, ok := arg(0); ok {
			access(p.with(elem), Write).srcs = c.Args[1:2]
		}
	case opOther:
		fa.collectCallee(call)
	}
	if callee := c.StaticCallee(); callee != nil {
		args := make([]*Path, len(c.Args))
		for i, a := range c.Args {
			if p, ok := fa.pathOf(a); ok {
				args[i] = &p
			}
		}
		var bindings []*Path
		if mc, ok := c.Value.(*ssa.MakeClosure); ok {
			bindings = fa.bindingPaths(mc)
		}
		// A call of a generic function or method from generic code
		// calls an instance; the package's function is its origin.
		if o := callee.Origin(); o != nil {
			callee = o
		}
		rc := Call{Instr: call, Callee: callee, Held: fa.held(call), CondHeld: fa.condHeld(call), OnlyIf: fa.onlyIf(call), Args: args, Bindings: bindings,
			Owned: fa.ownedArgs(c.Args, call)}
		if _, sum := fa.calleeSummary(c); sum != nil {
			rc.Callbacks = sum.Callbacks
			for _, i := range sum.Callbacks {
				if i >= len(c.Args) {
					continue
				}
				switch fn := c.Args[i].(type) {
				case *ssa.MakeClosure:
					rc.Closures = append(rc.Closures, ClosureArg{Fn: fn.Fn.(*ssa.Function), Bindings: fa.bindingPaths(fn)})
				case *ssa.Function: // a function literal that captures nothing
					rc.Closures = append(rc.Closures, ClosureArg{Fn: fn})
				}
			}
		}
		fa.info.Calls = append(fa.info.Calls, rc)
	} else if !c.IsInvoke() {
		fa.info.DynCalls = append(fa.info.DynCalls, Call{Instr: call, Held: fa.held(call)})
	}
}

// collectCallee adds the accesses a callee's Summary says it makes,
// mapped onto this function's state, each under the locks held at the
// call plus the callee's own, which form a critical section per call.
func (fa *funcAnalysis) collectCallee(call *ssa.Call) {
	c := call.Common()
	callee, sum := fa.calleeSummary(c)
	if sum == nil || len(sum.Accesses) == 0 {
		return
	}
	via := callee.String()
	if obj := funcObject(callee); obj != nil {
		via = obj.FullName()
	}
	held := fa.held(call)
	mapped := make([]*Access, len(sum.Accesses))
	for i, sa := range sum.Accesses {
		p, ok := fa.mapPath(c, callee, sa.Path)
		if p = fa.escapedAt(p, call); !ok || !p.Shared() {
			continue
		}
		hs := slices.Clone(held)
		for _, l := range sa.Locks {
			lp, ok := fa.mapPath(c, callee, l.Lock)
			if !ok || lockState(hs).find(lp.Key()) >= 0 {
				continue
			}
			k := callLock{call, lp.Key()}
			id, ok := fa.callCS[k]
			if !ok {
				id = fa.newCS()
				fa.callCS[k] = id
			}
			hs = append(hs, Held{Lock: lp, Read: l.Read, CS: id})
		}
		pos, expr := fa.locate(p, call.Pos())
		a := &Access{Path: p, Kind: sa.Kind, Atomic: sa.Atomic, Sync: sa.Sync, Pos: pos, Expr: expr,
			Via: via, Held: hs, Rechecked: sa.Rechecked, Refreshed: sa.Refreshed, Claimed: sa.Claimed, Decides: sa.Decides, Instr: call}
		for _, pi := range sa.Params {
			if pi < len(c.Args) {
				a.srcs = append(a.srcs, c.Args[pi])
			}
		}
		mapped[i] = a
		fa.addAccess(a)
	}
	results := make([][]*Access, len(sum.Results))
	for r, reads := range sum.Results {
		for _, ri := range reads {
			if ri < len(mapped) && mapped[ri] != nil {
				results[r] = append(results[r], mapped[ri])
			}
		}
	}
	// A read flows out of the call through the result that carries it.
	tuple := len(sum.Results) > 1
	for r, reads := range results {
		var carriers []ssa.Value
		if !tuple {
			carriers = []ssa.Value{call}
		} else if refs := call.Referrers(); refs != nil {
			for _, ref := range *refs {
				if ex, ok := ref.(*ssa.Extract); ok && ex.Index == r {
					carriers = append(carriers, ex)
				}
			}
		}
		for _, a := range reads {
			a.seeds = append(a.seeds, carriers...)
		}
	}
}

// markRechecked marks the writes that a read of the same state in the
// same critical section decides (Rechecked: the write re-validates what
// it depends on, as double-checked locking does) or precedes (Refreshed:
// c.n += d cannot lose an earlier update). A write is Claimed when its
// critical section tests and sets a flag that decides it (if w.done {
// return }; w.ctx = nil; w.done = true): one such write ever passes,
// whatever a stale check before the section saw.
//
// A write made through a call (a helper that pops a queue the caller has
// locked) is Rechecked the same way when a read of the state in the
// caller's critical section decides the call: the caller's Summary then
// says that its act re-validates under its own lock, so a check made in
// an earlier critical section of its caller is harmlessly stale.
func (fa *funcAnalysis) markRechecked() {
	f := fa.info
	for _, w := range f.Accesses {
		if w.Kind != Write || len(w.Held) == 0 {
			continue
		}
		key := w.Path.Key()
		for _, r := range f.Accesses {
			if r.Kind != Read || !SameCS(r, w) {
				continue
			}
			if w.Via != "" {
				// The callee's own reads come with its Summary.
				if r.Instr != w.Instr && r.Path.Key() == key {
					_, control := f.Feeds(r, w)
					w.Rechecked = w.Rechecked || control
				}
				continue
			}
			if r.Path.Key() != key {
				w.Claimed = w.Claimed || fa.testAndSet(r, w)
				continue
			}
			// Any read of the state in the write's own critical section
			// sees the current value (a free-list push reads the head
			// into the new node): the write overwrites nothing unseen.
			_, control := f.Feeds(r, w)
			if control || fa.exitDecided(r, w) {
				w.Rechecked, r.Rechecks = true, true
			}
			w.Refreshed = true
		}
	}
}

// exitDecided reports whether the value read by r decides, by returning
// early on its other way, whether the write w runs (exitDeciders).
func (fa *funcAnalysis) exitDecided(r, w *Access) bool {
	if w.Instr == nil || w.Instr.Block() == nil {
		return false
	}
	conds := fa.info.flowOf(r).conds
	for _, br := range exitDeciders(w.Instr.Block()) {
		if conds[br] {
			return true
		}
	}
	return false
}

// markDecides marks the reads that decide a write of the same critical
// section, among those whose values the function returns (the only ones
// a caller sees).
func (fa *funcAnalysis) markDecides() {
	f := fa.info
	for _, r := range f.Accesses {
		if r.Kind != Read || len(r.Held) == 0 || len(f.flowOf(r).results) == 0 {
			continue
		}
		for _, w := range f.Accesses {
			if w.Kind != Write || w.Via != "" || !SameCS(r, w) {
				continue
			}
			if _, control := f.Feeds(r, w); control {
				r.Decides = true
				break
			}
		}
	}
}

// testAndSet reports whether the read r decides the write w, and r's
// critical section also writes what r read on w's path (before or after
// w, not on another branch): the section claims a flag.
func (fa *funcAnalysis) testAndSet(r, w *Access) bool {
	f := fa.info
	key := r.stateKey()
	for _, s := range f.Accesses {
		if s.Kind == Write && s != w && s.stateKey() == key && SameCS(r, s) &&
			(Reaches(s.Instr, w.Instr) || Reaches(w.Instr, s.Instr)) {
			// The section sets what r read; the flow, which costs more,
			// says whether r decides w.
			_, control := f.Feeds(r, w)
			return control
		}
	}
	return false
}

// SameCS reports whether a and b share a critical section.
func SameCS(a, b *Access) bool {
	for _, h := range a.Held {
		// b's first hold of h's lock must be h's section. The locks'
		// keys, strings made each time, are compared only where the
		// sections match.
		for j, hb := range b.Held {
			if hb.CS != h.CS {
				continue
			}
			key := h.Lock.Key()
			if hb.Lock.Key() == key && !slices.ContainsFunc(b.Held[:j], func(e Held) bool { return e.Lock.Key() == key }) {
				return true
			}
		}
	}
	return false
}

// bindingPaths returns the paths of the variables a closure captures.
func (fa *funcAnalysis) bindingPaths(mc *ssa.MakeClosure) []*Path {
	out := make([]*Path, len(mc.Bindings))
	for i, b := range mc.Bindings {
		if p, ok := fa.bindingPath(b); ok {
			out[i] = &p
		}
	}
	return out
}

// bindingPath returns the path of what a closure's free variable stands
// for: the captured variable, or, for a variable that only ever holds
// one reference (a captured parameter), what that reference refers to,
// as pathOf names the variable's loads.
func (fa *funcAnalysis) bindingPath(b ssa.Value) (Path, bool) {
	if a, ok := b.(*ssa.Alloc); ok {
		if s := onlyStored(a); s != nil {
			return fa.pathOf(s)
		}
	}
	return fa.pathOf(b)
}
