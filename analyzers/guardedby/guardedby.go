package guardedby

import (
	_ "embed"
	"fmt"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/avcheck/avcheck/analyzers/annotation"
	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/internal/analyzerdoc"
	"github.com/avcheck/avcheck/internal/diag"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

//go:embed doc.go
var doc string

// The diagnostic categories of guardedby's findings.
const (
	CategoryUnguarded = "unguarded-access"
	CategoryReadLock  = "write-under-read-lock"
)

// Config holds the analyzer's options.
type Config struct {
	// Threshold is the share of a field's accesses that must hold a lock
	// for the lock to be inferred as its guard.
	Threshold float64
}

// DefaultConfig returns the options avcheck uses unless told otherwise.
func DefaultConfig() *Config { return &Config{Threshold: 0.65} }

// Analyzer is the guardedby analyzer with the default options; its flag
// -threshold sets Config.Threshold.
var Analyzer = New(DefaultConfig())

// New returns a guardedby analyzer with the given options, which its
// flags then set.
func New(cfg *Config) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:       "guardedby",
		Doc:        analyzerdoc.Extract(doc, "guardedby"),
		URL:        "https://pkg.go.dev/github.com/avcheck/avcheck/analyzers/guardedby",
		Requires:   []*analysis.Analyzer{regions.Analyzer, annotation.Analyzer},
		FactTypes:  []analysis.Fact{new(Guard)},
		ResultType: reflect.TypeFor[map[*types.Var]Guard](),
		Run:        func(pass *analysis.Pass) (any, error) { return run(pass, cfg) },
	}
	a.Flags.Float64Var(&cfg.Threshold, "threshold", cfg.Threshold, "share of a field's accesses that must hold a mutex for it to be inferred as the guard")
	return a
}

// Guard is the Fact, and the Result entry, of a guarded field or
// package-level variable.
type Guard struct {
	// Lock is the sibling field's name for a field, the variable's
	// "pkgpath.Name" for a package-level variable.
	Lock string
	// Annotated says a //avcheck:guardedby names it; otherwise Held of
	// Total accesses in its package hold it.
	Annotated   bool
	Held, Total int
}

// AFact marks Guard as an analysis Fact.
func (*Guard) AFact() {}

func (g *Guard) String() string {
	if g.Annotated {
		return "guardedby(" + g.Lock + ")"
	}
	return fmt.Sprintf("guardedby(%s, %d/%d)", g.Lock, g.Held, g.Total)
}

// access is a direct access with the guards it holds.
type access struct {
	a      *regions.Access
	guards map[string]bool // lock key (see guardKey) → held for writing
	// handedOff says that a's function receives from a channel that a
	// writer of the field signals after writing it: the value is handed
	// from goroutine to goroutine, and the channel orders the accesses.
	handedOff bool
	fn        *ssa.Function // a's function
	// contexts are the locks held at a, as guards does, and by
	// regions.LockClass, in each way its function is entered
	// (regions.EntryContexts).
	contexts []map[string]bool
}

func run(pass *analysis.Pass, cfg *Config) (any, error) {
	res := pass.ResultOf[regions.Analyzer].(*regions.Result)
	ann := pass.ResultOf[annotation.Analyzer].(*annotation.Set)

	// Accesses are counted by source position: c.n++ is one access,
	// although it reads and writes.
	byVar := map[*types.Var][]access{}
	type varPos struct {
		v   *types.Var
		pos token.Pos
	}
	index := map[varPos]int{}
	entry := regions.EntryLocks(res, func(pos token.Pos) bool { return inTestFile(pass, pos) })
	contexts := regions.EntryContexts(res, func(pos token.Pos) bool { return inTestFile(pass, pos) })
	signalled := handoffs(res)
	owner := regions.Owners(res)
	for _, f := range res.Funcs {
		if exempt(f) || regions.Builder(f) {
			continue
		}
		held := entry[f.Fn]
		recv := receives(f)
		starts := starter(f)
		for _, a := range f.Accesses {
			if a.Var == nil || a.Via != "" || a.Atomic != "" || a.Sync || annotation.IsMutex(a.Var.Type()) {
				continue
			}
			cs, shared := sharedContexts(a, f.Fn, contexts[f.Fn])
			if !shared || beforeStart(f, a, starts) {
				continue // made only on objects not yet shared
			}
			acc := access{a: a, guards: regions.GuardsOf(a, held), handedOff: handedOff(signalled[a.Var], recv), fn: f.Fn,
				contexts: contextGuards(a, f.Fn, cs)}
			if len(acc.guards) == 0 && inTest(pass, a) {
				continue // see inTest
			}
			k := varPos{a.Var, a.Pos}
			if i, ok := index[k]; ok {
				if a.Kind == regions.Write { // a write needs the write lock
					byVar[a.Var][i] = acc
				}
				continue
			}
			index[k] = len(byVar[a.Var])
			byVar[a.Var] = append(byVar[a.Var], acc)
		}
	}
	vars := make([]*types.Var, 0, len(byVar))
	for v := range byVar {
		vars = append(vars, v)
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Pos() < vars[j].Pos() })

	guards := map[*types.Var]Guard{}
	for v, lock := range ann.Guards {
		guards[v] = Guard{Lock: lockName(lock), Annotated: true}
	}
	for _, v := range vars {
		if _, ok := guards[v]; ok || v.Pkg() != pass.Pkg {
			continue
		}
		if g, ok := infer(v, byVar[v], cfg.Threshold); ok {
			guards[v] = g
		}
	}
	for v, g := range guards {
		if v.Pkg() == pass.Pkg && v.Exported() {
			pass.ExportObjectFact(v, &g)
		}
	}
	for _, v := range vars {
		g, ok := guards[v]
		if !ok {
			var fact Guard
			if v.Pkg() == pass.Pkg || !pass.ImportObjectFact(v, &fact) {
				continue
			}
			g = fact
		}
		report(pass, ann, byVar[v], g, owner)
	}
	return guards, nil
}

// exempt says whether a function's accesses are made before the value
// can be shared, or with the guard held by convention.
func exempt(f *regions.Func) bool {
	name := f.Fn.Name()
	for fn := f.Fn; fn.Parent() != nil; fn = fn.Parent() {
		name = fn.Parent().Name()
	}
	return name == "init" || strings.HasPrefix(name, "init#") ||
		strings.HasSuffix(f.Fn.Name(), "Locked") || strings.HasSuffix(f.Fn.Name(), "locked")
}

// starter returns the go statements of f that start a goroutine given
// f's receiver (go s.loop(), go func() { ... s ... }()), if f is a
// method that takes no lock: a Start or Run method, which sets its
// receiver up and then starts the goroutine that serves it. By that
// convention it is called before the value is shared, as a constructor
// is, and its writes before the go statement (beforeStart) are
// initialisation that no lock guards.
func starter(f *regions.Func) []*ssa.Go {
	fn := f.Fn
	if fn.Signature.Recv() == nil || len(fn.Params) == 0 || fn.Blocks == nil {
		return nil
	}
	if _, ok := fn.Signature.Recv().Type().(*types.Pointer); !ok || !regions.HoldsNoLock(f) {
		return nil
	}
	recv := fn.Params[0]
	var gos []*ssa.Go
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			g, ok := instr.(*ssa.Go)
			if !ok {
				continue
			}
			given := slices.Contains(g.Call.Args, ssa.Value(recv))
			if mc, ok := g.Call.Value.(*ssa.MakeClosure); ok {
				given = given || slices.ContainsFunc(mc.Bindings, func(v ssa.Value) bool { return holds(v, recv) })
			}
			if given {
				gos = append(gos, g)
			}
		}
	}
	return gos
}

// holds reports whether v is the value x, or the variable a closure
// captures it in (a cell that x is stored into).
func holds(v, x ssa.Value) bool {
	if v == x {
		return true
	}
	cell, ok := v.(*ssa.Alloc)
	if !ok {
		return false
	}
	for _, r := range *cell.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Addr == cell && st.Val == x {
			return true
		}
	}
	return false
}

// beforeStart reports whether a is a write of a field of f's receiver
// made before one of the go statements starts (starter): every path to
// the go statement passes the write first.
func beforeStart(f *regions.Func, a *regions.Access, starts []*ssa.Go) bool {
	if a.Kind != regions.Write || a.Path.Root.Kind != regions.RootParam || a.Path.Root.Index != 0 || len(a.Path.Fields) == 0 || a.Instr == nil {
		return false
	}
	ab := a.Instr.Block()
	for _, g := range starts {
		gb := g.Block()
		if ab == gb && slices.Index(ab.Instrs, a.Instr) < slices.Index(gb.Instrs, ssa.Instruction(g)) ||
			ab != gb && ab.Dominates(gb) {
			return true
		}
	}
	return false
}

// lockName is how a Guard names its lock.
func lockName(lock *types.Var) string {
	if lock.IsField() {
		return lock.Name()
	}
	return lock.Pkg().Path() + "." + lock.Name()
}

// infer returns the lock held at the largest share of the accesses to
// v, if that share reaches the threshold and at least two accesses hold
// it. A lock held at none of v's writes guards v only if v is the
// package's own state written without it: a field written nowhere but
// where its value is built is only read once the value is shared, and an
// exported field that its package's users set without a lock they cannot
// take (an unexported mutex) is configuration, set before the value is
// shared. Their readers hold the lock for other state.
func infer(v *types.Var, accs []access, threshold float64) (Guard, bool) {
	count := map[string]int{}
	written := map[string]bool{}
	writes := false
	for _, a := range accs {
		writes = writes || a.a.Kind == regions.Write
		for l := range a.guards {
			count[l]++
			written[l] = written[l] || a.a.Kind == regions.Write
		}
	}
	var best Guard
	for l, n := range count {
		if !written[l] && (!writes || configuration(v, l)) {
			continue
		}
		if n > best.Held || n == best.Held && l < best.Lock {
			best = Guard{Lock: l, Held: n, Total: len(accs)}
		}
	}
	if best.Held < 2 || float64(best.Held) < threshold*float64(len(accs)) {
		return Guard{}, false
	}
	return best, true
}

// configuration reports whether the package's users can set v but not
// take the lock: v is exported and the lock is not.
func configuration(v *types.Var, lock string) bool {
	if i := strings.LastIndex(lock, "."); i >= 0 {
		lock = lock[i+1:]
	}
	return v.Exported() && !token.IsExported(lock)
}

func report(pass *analysis.Pass, ann *annotation.Set, accs []access, g Guard, owner map[*ssa.Function]*ssa.Function) {
	var example token.Pos
	for _, a := range accs {
		if _, ok := a.guards[g.Lock]; ok {
			example = a.a.Pos
			break
		}
	}
	lock := func(a *regions.Access) string {
		if strings.Contains(g.Lock, ".") || strings.Contains(g.Lock, "/") {
			_, name := splitLast(g.Lock)
			return name
		}
		p := a.Path
		for len(p.Fields) > 0 && p.Fields[len(p.Fields)-1] == "[]" {
			p.Fields = p.Fields[:len(p.Fields)-1]
		}
		if len(p.Fields) == 0 {
			return g.Lock
		}
		if p.Root.Kind == regions.RootLocal {
			p.Root.Name = a.RootText()
		}
		p.Fields = append(append([]string(nil), p.Fields[:len(p.Fields)-1]...), g.Lock)
		return p.String()
	}
	why := "(//avcheck:guardedby)"
	if !g.Annotated {
		why = fmt.Sprintf("(held at %d of its %d accesses)", g.Held, g.Total)
		// The package's accesses outside its test files are the same in
		// the package and in its test variant (go vet and the checker
		// analyse both), so that counted over them the message is the
		// same in both, and shown once. A guard seen mostly in the tests
		// keeps the count that found it.
		held, total := 0, 0
		for _, a := range accs {
			if inTest(pass, a.a) {
				continue
			}
			total++
			if _, ok := a.guards[g.Lock]; ok {
				held++
			}
		}
		if total < len(accs) && held >= 2 {
			why = fmt.Sprintf("(held at %d of its %d accesses)", held, total)
		}
	}
	atWrites := heldAtEveryWrite(accs)
	for _, a := range accs {
		forWrite, held := a.guards[g.Lock]
		if !held && (a.handedOff || inTest(pass, a.a) || a.a.Kind == regions.Read && guardedIn(a.contexts, g.Lock, atWrites) || ownRead(a, accs, owner)) {
			continue
		}
		var related []diag.Related
		if example.IsValid() && example != a.a.Pos {
			related = []diag.Related{{Pos: example, Message: lock(a.a) + " held here"}}
		}
		switch {
		case !held:
			diag.Report(pass, ann, CategoryUnguarded, a.a.Pos, related,
				"%s is accessed without %s, which guards it %s", regions.Short(a.a.Expr), lock(a.a), why)
		case a.a.Kind == regions.Write && !forWrite:
			diag.Report(pass, ann, CategoryReadLock, a.a.Pos, related,
				"%s is written with only the read lock of %s held", regions.Short(a.a.Expr), lock(a.a))
		}
	}
}

// heldAtEveryWrite returns the locks held for writing at every write of
// a field, in every way its function is entered. A field written under
// two locks (mu and wmu) can be read with either: each excludes every
// writer. The other lock may be another object's, known by its class
// (regions.LockClass): an item's fields that the cache writes with its
// own lock held as well as the item's.
func heldAtEveryWrite(accs []access) map[string]bool {
	var out map[string]bool
	for _, a := range accs {
		if a.a.Kind != regions.Write {
			continue
		}
		for _, guards := range a.contexts {
			if out == nil {
				out = map[string]bool{}
				for l, forWrite := range guards {
					if forWrite {
						out[l] = true
					}
				}
				continue
			}
			for l := range out {
				if !guards[l] {
					delete(out, l)
				}
			}
		}
	}
	return out
}

// guardedIn reports whether each of a read's contexts holds the guard,
// or a lock that every write of the field holds: a helper of readers
// that some callers call with the object's own lock held and others with
// their lock that the writers also take (an isExpiredUnsafe that the
// item's IsExpired and the cache's sweep both call).
func guardedIn(contexts []map[string]bool, guard string, atWrites map[string]bool) bool {
	for _, guards := range contexts {
		if _, ok := guards[guard]; ok {
			continue
		}
		if !holdsAny(guards, atWrites) {
			return false
		}
	}
	return true
}

func holdsAny(guards, locks map[string]bool) bool {
	for l := range guards {
		if locks[l] {
			return true
		}
	}
	return false
}

// sharedContexts returns the contexts of fn in which a's object can be
// shared: not those whose callers own it, having allocated it and not
// yet let it escape (a constructor that sets its object up through a
// helper of its methods). It reports false when a is made in none: then
// a is made, as in the allocating function, on an object no other
// goroutine can reach.
func sharedContexts(a *regions.Access, fn *ssa.Function, contexts []regions.Context) ([]regions.Context, bool) {
	if len(contexts) == 0 {
		return nil, true
	}
	var out []regions.Context
	for _, c := range contexts {
		if !c.Owns(fn, a.Path) {
			out = append(out, c)
		}
	}
	return out, len(out) > 0
}

// contextGuards returns the locks held at a in each of its function's
// contexts (one with none if it has no contexts): the guards that
// regions.GuardsOf finds, and the other locks by their class. A lock of
// the class of a's own struct is left to GuardsOf, which knows whether
// it is of the same value: a node's field read with the next node's
// lock held is not guarded.
func contextGuards(a *regions.Access, fn *ssa.Function, contexts []regions.Context) []map[string]bool {
	if len(contexts) == 0 {
		contexts = []regions.Context{{}}
	}
	target := a.Path
	for len(target.Fields) > 0 && target.Fields[len(target.Fields)-1] == "[]" {
		target.Fields = target.Fields[:len(target.Fields)-1]
	}
	own, _ := regions.OwnerClass(fn, target)
	other := func(k string) bool {
		i := strings.LastIndex(k, ".")
		return own == "" || i < 0 || k[:i] != own
	}
	out := make([]map[string]bool, len(contexts))
	for i, c := range contexts {
		held := c.Held
		for _, ch := range a.CondHeld {
			if v, ok := c.Consts[ch.Param]; ok && v == ch.Value {
				held = append(slices.Clip(held), ch.Held)
			}
		}
		guards := regions.GuardsOf(a, held)
		for _, h := range slices.Concat(a.Held, held) {
			if k, ok := regions.LockClass(fn, h.Lock); ok && other(k) {
				guards[k] = guards[k] || !h.Read
			}
		}
		for k, w := range c.Other {
			if other(k) {
				guards[k] = guards[k] || w
			}
		}
		out[i] = guards
	}
	return out
}

// inTest reports whether a is in a test file. A test looks at its
// package's state where it knows the state is quiet (after Close, after
// wg.Wait), so its accesses without a lock are neither counted nor
// reported; the ones with a lock still count towards inferring the guard.
func inTest(pass *analysis.Pass, a *regions.Access) bool { return inTestFile(pass, a.Pos) }

func inTestFile(pass *analysis.Pass, pos token.Pos) bool {
	f := pass.Fset.File(pos)
	return f != nil && strings.HasSuffix(f.Name(), "_test.go")
}

func splitLast(id string) (string, string) {
	i := strings.LastIndex(id, ".")
	return id[:i], id[i+1:]
}
