package atomicact

import (
	_ "embed"
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
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

// The diagnostic categories of atomicact's two kinds of finding.
const (
	CategoryCheckThenAct = "atomic-check-then-act"
	CategoryMixed        = "mixed-atomic-access"
)

// Analyzer reports atomic check-then-act and mixed atomic/plain access.
var Analyzer = &analysis.Analyzer{
	Name:      "atomicact",
	Doc:       analyzerdoc.Extract(doc, "atomicact"),
	URL:       "https://pkg.go.dev/github.com/avcheck/avcheck/analyzers/atomicact",
	Requires:  []*analysis.Analyzer{regions.Analyzer, annotation.Analyzer},
	FactTypes: []analysis.Fact{new(AtomicVar)},
	Run:       run,
}

// AtomicVar is the Fact of a field or package-level variable that its
// package accesses through sync/atomic functions, so that plain accesses
// in other packages are reported too.
type AtomicVar struct {
	// Where is the first atomic access, as "atomic.Add at file.go:12".
	Where string
}

// AFact marks AtomicVar as an analysis Fact.
func (*AtomicVar) AFact() {}

func (f *AtomicVar) String() string { return "atomic(" + f.Where + ")" }

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[regions.Analyzer].(*regions.Result)
	ann := pass.ResultOf[annotation.Analyzer].(*annotation.Set)
	entry := regions.EntryLocks(res, func(pos token.Pos) bool {
		return strings.HasSuffix(pass.Fset.Position(pos).Filename, "_test.go")
	})
	guarded := guardedWrites(res, entry)
	turns := takeTurns(res, entry)
	adds := addGuards(res, entry)
	for _, f := range res.Funcs {
		checkThenAct(pass, ann, res, entry, guarded, turns, f)
		lostAdds(pass, ann, res, entry, adds, f)
	}
	mixed(pass, ann, res, entry)
	return nil, nil
}

func checkThenAct(pass *analysis.Pass, ann *annotation.Set, res *regions.Result, entry map[*ssa.Function][]regions.Held, guarded, turns map[*types.Var]map[string]bool, f *regions.Func) {
	startup := regions.StartupOf(res, f)
	for _, l := range f.Accesses {
		// The function's own operations: a callee's atomics are its own
		// protocol, checked where it is written.
		if l.Atomic != "Load" || l.Via != "" {
			continue
		}
		alone := startup.Alone(l) // nothing else runs yet
		for _, w := range f.Accesses {
			if w.Atomic == "" || w.Atomic == "Load" || w.Atomic == "CompareAndSwap" || w.Via != "" ||
				w.Path.Key() != l.Path.Key() || w.Rechecked || regions.SameCS(l, w) || casDecides(f, w) ||
				alone && startup.Alone(w) {
				continue
			}
			if oneSection(l, w, entry[f.Fn], guarded[l.Var]) {
				continue
			}
			data, control := f.Feeds(l, w)
			if !data && (!control || onlyAsserts(f, l, w)) {
				continue
			}
			if w.Atomic == "Add" && !control {
				// n := x.Load(); x.Add(-n) takes away what it read:
				// an Add in between is kept, nothing is lost.
				continue
			}
			if w.Atomic == "Add" && oneSection(l, w, entry[f.Fn], turns[l.Var]) {
				// The writes that a load decides take turns under a
				// lock, and the others only add: an Add in between
				// is kept.
				continue
			}
			how := "decides"
			if data {
				how = "computes"
			}
			diag.Report(pass, ann, CategoryCheckThenAct, l.Pos,
				[]diag.Related{{Pos: w.Pos, Message: fmt.Sprintf("atomic %s of %s here", w.Atomic, w.Path)}},
				"the atomic load of %s %s a later atomic %s of it; another goroutine can change it in between: use CompareAndSwap",
				l.Path, how, w.Atomic)
			break
		}
	}
}

// guardedWrites returns, for each variable the package writes
// atomically, the locks held at every one of its atomic writes (a lock
// of the same struct value, or a package-level one, by name), where the
// writing function holds it or runs with it (regions.EntryLocks).
func guardedWrites(res *regions.Result, entry map[*ssa.Function][]regions.Held) map[*types.Var]map[string]bool {
	return commonGuards(res, entry, func(a *regions.Access) bool { return a.Atomic != "Load" }, writeGuards)
}

// addsOf is what addGuards knows of the Adds of one variable: where the
// first is, and the locks held for writing at every one of them.
type addsOf struct {
	first  *regions.Access
	guards map[string]bool
}

// addGuards returns, for each variable the package atomically adds to,
// by its class (regions.LockClass: the field of any value of its type,
// or the package-level variable), where the first Add is and the locks
// held for writing at every one.
func addGuards(res *regions.Result, entry map[*ssa.Function][]regions.Held) map[string]*addsOf {
	out := map[string]*addsOf{}
	for _, f := range res.Funcs {
		for _, a := range f.Accesses {
			if a.Atomic != "Add" {
				continue
			}
			class, ok := regions.LockClass(f.Fn, a.Path)
			if !ok {
				continue
			}
			held := writeGuards(a, entry[f.Fn])
			o := out[class]
			if o == nil {
				out[class] = &addsOf{first: a, guards: held}
				continue
			}
			if a.Pos < o.first.Pos {
				o.first = a
			}
			keepCommon(o.guards, held)
		}
	}
	return out
}

// lostAdds reports an atomic load that an atomic Store of the same
// variable follows on every path without the load deciding or computing
// it (n := x.Load(); total += n; x.Store(0)), where the package adds to
// the variable atomically: an Add made between the two is lost, in
// neither what the load saw nor what the Store leaves. One Swap does
// both. The load and the Store may be made through methods of the
// variable's own type (c.Value(), then c.Reset()). A load and a Store
// in one critical section of a lock that every Add holds are not
// reported.
func lostAdds(pass *analysis.Pass, ann *annotation.Set, res *regions.Result, entry map[*ssa.Function][]regions.Held, adds map[string]*addsOf, f *regions.Func) {
	startup := regions.StartupOf(res, f)
	for _, l := range f.Accesses {
		if l.Atomic != "Load" || !wrapped(res, l) {
			continue
		}
		class, ok := regions.LockClass(f.Fn, l.Path)
		if !ok || adds[class] == nil {
			continue
		}
		for _, w := range f.Accesses {
			if w.Atomic != "Store" || w.Path.Key() != l.Path.Key() || l.Instr == w.Instr || !regions.Dominates(l.Instr, w.Instr) ||
				!wrapped(res, w) || startup.Alone(l) && startup.Alone(w) || casDecides(f, w) {
				continue
			}
			if data, control := f.Feeds(l, w); data || control {
				continue // check-then-act's
			}
			if regions.SameCS(l, w) && excludes(l, entry[f.Fn], adds[class].guards) || oneSection(l, w, entry[f.Fn], adds[class].guards) {
				continue
			}
			add := adds[class].first
			diag.Report(pass, ann, CategoryCheckThenAct, l.Pos,
				[]diag.Related{{Pos: w.Pos, Message: fmt.Sprintf("atomic Store of %s here", w.Path)}, {Pos: add.Pos, Message: fmt.Sprintf("atomic Add of %s here", add.Path)}},
				"the atomic load of %s and its later atomic Store are two steps; an Add that another goroutine makes between them is lost: use Swap",
				l.Path)
			break
		}
	}
}

// wrapped says whether a is made by its function itself, or inside a
// call of a function of the package that does nothing else (the
// methods of a counter type: func (c *Counter) Value() int64 { return
// atomic.LoadInt64((*int64)(c)) }). A call that makes an atomic access
// among others (a resize that claims its turn with a CompareAndSwap,
// sync.WaitGroup's Wait) runs a protocol of its own.
func wrapped(res *regions.Result, a *regions.Access) bool {
	if a.Via == "" {
		return true
	}
	call, ok := a.Instr.(ssa.CallInstruction)
	if !ok {
		return false
	}
	callee := res.ByFunc[call.Common().StaticCallee()]
	if callee == nil || len(callee.Accesses) != 1 || len(callee.SyncOps) != 0 {
		return false
	}
	for _, c := range callee.Calls {
		if c.Callee == nil || c.Callee.Pkg == nil || c.Callee.Pkg.Pkg.Path() != "sync/atomic" {
			return false
		}
	}
	return true
}

// takeTurns returns, for each variable whose atomic writes other than
// Adds are all decided or computed by an atomic load of it in their
// function, the locks held for writing at every one of those (a flow
// control window: n := min(s.window.Load(), len(b)), then
// s.window.Add(-n), by writers that hold s.sendLock, while the reader of
// window updates makes a plain s.window.Add(k)). Such writes take turns
// under the lock; the other writes are Adds that no load decides, and an
// Add made between a load and the write it decides is kept: the write
// does not undo it. Variables with another write are left out.
func takeTurns(res *regions.Result, entry map[*ssa.Function][]regions.Held) map[*types.Var]map[string]bool {
	decided := map[*regions.Access]bool{}
	other := map[*types.Var]bool{} // a write neither decided nor an Add
	for _, f := range res.Funcs {
		for _, w := range f.Accesses {
			if w.Atomic == "" || w.Atomic == "Load" || w.Var == nil || w.Via != "" {
				continue
			}
			for _, l := range f.Accesses {
				if l.Atomic != "Load" || l.Via != "" || l.Path.Key() != w.Path.Key() {
					continue
				}
				if data, control := f.Feeds(l, w); data || control {
					decided[w] = true
					break
				}
			}
			if !decided[w] && w.Atomic != "Add" {
				other[w.Var] = true
			}
		}
	}
	out := commonGuards(res, entry, func(a *regions.Access) bool { return a.Atomic != "Load" && decided[a] }, writeGuards)
	for v := range other {
		delete(out, v)
	}
	return out
}

// atomicGuards returns, for each variable the package accesses
// atomically, the locks held, in either mode, at every one of its atomic
// accesses (regions.GuardsOf, with the locks the function runs with).
func atomicGuards(res *regions.Result, entry map[*ssa.Function][]regions.Held) map[*types.Var]map[string]bool {
	return commonGuards(res, entry, func(*regions.Access) bool { return true }, func(a *regions.Access, entry []regions.Held) map[string]bool {
		held := map[string]bool{}
		for l := range regions.GuardsOf(a, entry) {
			held[l] = true
		}
		return held
	})
}

// commonGuards returns, for each variable, the locks that guards gives
// at every one of its atomic accesses that pick chooses.
func commonGuards(res *regions.Result, entry map[*ssa.Function][]regions.Held, pick func(*regions.Access) bool,
	guards func(*regions.Access, []regions.Held) map[string]bool) map[*types.Var]map[string]bool {
	out := map[*types.Var]map[string]bool{}
	for _, f := range res.Funcs {
		for _, a := range f.Accesses {
			if a.Atomic == "" || a.Var == nil || a.Via != "" || !pick(a) {
				continue
			}
			held := guards(a, entry[f.Fn])
			if prev, ok := out[a.Var]; ok {
				keepCommon(prev, held)
			} else {
				out[a.Var] = held
			}
		}
	}
	return out
}

// keepCommon removes from locks those not in held.
func keepCommon(locks, held map[string]bool) {
	for l := range locks {
		if !held[l] {
			delete(locks, l)
		}
	}
}

// excludes reports whether the plain write a holds for writing a lock
// that every atomic access of its variable holds (atomicGuards): the
// write lock of an RWMutex excludes the atomic accesses made under its
// read lock, so the write is ordered with each of them.
func excludes(a *regions.Access, entry []regions.Held, guards map[string]bool) bool {
	for l := range writeGuards(a, entry) {
		if guards[l] {
			return true
		}
	}
	return false
}

// oneSection reports whether the load l and the write w run in one
// critical section that the function runs with (its callers hold it,
// regions.EntryLocks), of a lock every atomic write of the variable
// holds: nothing writes the variable in between.
func oneSection(l, w *regions.Access, entry []regions.Held, guarded map[string]bool) bool {
	if len(entry) == 0 || len(guarded) == 0 {
		return false
	}
	atEntry := writeGuards(&regions.Access{Path: l.Path}, entry)
	for lock := range atEntry {
		if guarded[lock] && writeGuards(w, entry)[lock] {
			return true
		}
	}
	return false
}

// writeGuards returns the locks held for writing at a, or on entry to
// its function, that can guard what it accesses (regions.GuardsOf).
func writeGuards(a *regions.Access, entry []regions.Held) map[string]bool {
	out := map[string]bool{}
	for l, write := range regions.GuardsOf(a, entry) {
		if write {
			out[l] = true
		}
	}
	return out
}

// onlyAsserts reports whether every branch through which the load l
// decides w has a side that panics: the load checks for misuse ("if
// s.state.Load() != want { panic(...) }"), and the write is made on the
// side where the check found nothing wrong. The check is best effort,
// and whether the write happens does not otherwise depend on the load.
func onlyAsserts(f *regions.Func, l, w *regions.Access) bool {
	brs := f.Deciders(l, w)
	for _, br := range brs {
		if !panics(br.Block().Succs[0]) && !panics(br.Block().Succs[1]) {
			return false
		}
	}
	return len(brs) > 0
}

// panics reports whether a block, with the blocks it jumps to
// unconditionally, ends in a panic.
func panics(b *ssa.BasicBlock) bool {
	for range 8 {
		if len(b.Instrs) == 0 {
			return false
		}
		switch b.Instrs[len(b.Instrs)-1].(type) {
		case *ssa.Panic:
			return true
		case *ssa.Jump:
			b = b.Succs[0]
		default:
			return false
		}
	}
	return false
}

// casDecides reports whether a CompareAndSwap of the same variable
// decides w: the swap claimed it, as in a first-store protocol.
func casDecides(f *regions.Func, w *regions.Access) bool {
	for _, c := range f.Accesses {
		if c.Atomic == "CompareAndSwap" && c.Via == "" && c.Path.Key() == w.Path.Key() {
			if _, control := f.Feeds(c, w); control {
				return true
			}
		}
	}
	return false
}

// mixed reports the plain accesses of variables that are accessed
// atomically, in this package or, by their Fact, in another.
func mixed(pass *analysis.Pass, ann *annotation.Set, res *regions.Result, entry map[*ssa.Function][]regions.Held) {
	first := map[*types.Var]*regions.Access{}
	for _, f := range res.Funcs {
		for _, a := range f.Accesses {
			if a.Atomic != "" && a.Var != nil && a.Via == "" && !atomicType(a.Var.Type()) {
				if prev, ok := first[a.Var]; !ok || a.Pos < prev.Pos {
					first[a.Var] = a
				}
			}
		}
	}
	vars := make([]*types.Var, 0, len(first))
	for v := range first {
		vars = append(vars, v)
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Pos() < vars[j].Pos() })
	for _, v := range vars {
		if v.Pkg() == pass.Pkg {
			a := first[v]
			pass.ExportObjectFact(v, &AtomicVar{Where: where(pass.Fset, a)})
		}
	}
	released := releases(res)
	excluded := atomicGuards(res, entry)
	home := homes(res)
	held := holders(res)
	for _, f := range res.Funcs {
		if f.Linked {
			// Called by name from another package, typically the
			// runtime, in a context not shown here (with the world
			// stopped, say): that the atomic accesses can run at the
			// same time is not known.
			continue
		}
		if regions.Builder(f) {
			// A builder method (it returns its receiver to be
			// chained and takes no lock) sets its value up before
			// the value is shared, as a constructor does.
			continue
		}
		startup := regions.StartupOf(res, f)
		for _, a := range f.Accesses {
			if a.Atomic != "" || a.Var == nil || a.Via != "" || a.Sync || atomicType(a.Var.Type()) {
				continue
			}
			if startup.Alone(a) {
				continue // no atomic access can run at the same time yet
			}
			if acquired(f, a, released) {
				continue
			}
			if a.Kind == regions.Read && len(a.Held) > 0 {
				continue // writers are assumed to hold the lock too
			}
			if a.Kind == regions.Write && excludes(a, entry[f.Fn], excluded[a.Var]) {
				continue // every atomic access holds the lock, if only to read
			}
			if a.Kind == regions.Read && afterWait(a) {
				continue // the goroutines that add have finished
			}
			verb := "read"
			if a.Kind == regions.Write {
				verb = "written"
			}
			if h, ok := home[a.Var]; ok && !atHome(a, h) {
				continue // another instance than the atomic ones (home.go)
			}
			if elsewhereHeld(a, held) {
				continue // held where no atomic access is (home.go)
			}
			inner, at, elsewhere := atomicAt(pass, first, a.Var)
			if inner == nil {
				// A struct value that holds an atomically accessed
				// field: copying or assigning it accesses that field
				// plainly (return c.stats, against an atomic add of
				// c.stats.Writes).
				inner, at, elsewhere = nestedAtomic(pass, first, a.Var.Type(), 0)
				if inner == nil {
					continue
				}
			}
			var related []diag.Related
			if at != nil {
				related = []diag.Related{{Pos: at.Pos, Message: fmt.Sprintf("atomic %s of %s here", at.Atomic, at.Path)}}
			}
			if inner != a.Var {
				diag.Report(pass, ann, CategoryMixed, a.Pos, related,
					"%s is %s plainly here, and with it its field %s, which is accessed atomically elsewhere (%s); the plain access races with the atomic ones",
					regions.Short(a.Expr), verb, inner.Name(), elsewhere)
				continue
			}
			diag.Report(pass, ann, CategoryMixed, a.Pos, related,
				"%s is %s plainly here but accessed atomically elsewhere (%s); the plain access races with the atomic ones",
				regions.Short(a.Expr), verb, elsewhere)
		}
	}
}

// atomicAt returns v if it is accessed atomically, in this package (with
// its first atomic access) or by its Fact in another, and where.
func atomicAt(pass *analysis.Pass, first map[*types.Var]*regions.Access, v *types.Var) (*types.Var, *regions.Access, string) {
	if at, ok := first[v]; ok {
		return v, at, where(pass.Fset, at)
	}
	var fact AtomicVar
	if pass.ImportObjectFact(v, &fact) {
		return v, nil, fact.Where
	}
	return nil, nil, ""
}

// nestedAtomic returns a field held by value in a value of type t (in a
// struct, an array, a struct in those) that is accessed atomically.
func nestedAtomic(pass *analysis.Pass, first map[*types.Var]*regions.Access, t types.Type, depth int) (*types.Var, *regions.Access, string) {
	if depth > 4 {
		return nil, nil, ""
	}
	switch u := t.Underlying().(type) {
	case *types.Array:
		return nestedAtomic(pass, first, u.Elem(), depth+1)
	case *types.Struct:
		for f := range u.Fields() {
			if syncObject(f.Type()) {
				// A mutex, a WaitGroup, a Once, an atomic.Bool: its
				// atomic state is the synchronisation's own, not data
				// of the struct (copying one is go vet's copylocks).
				continue
			}
			if v, at, w := atomicAt(pass, first, f); v != nil {
				return v, at, w
			}
			if v, at, w := nestedAtomic(pass, first, f.Type(), depth+1); v != nil {
				return v, at, w
			}
		}
	}
	return nil, nil, ""
}

// afterWait reports whether every path to the read a, in its function,
// passes a WaitGroup's (or an errgroup's) Wait: the goroutines that
// update the variable atomically (wg.Add(1); go func() { defer wg.Done();
// atomic.AddInt64(&sum, 1) }()) have finished, and the read after Wait
// sees their updates. Atomic updates from goroutines that the group does
// not wait for are not told apart.
func afterWait(a *regions.Access) bool {
	if a.Instr == nil || a.Instr.Block() == nil {
		return false
	}
	b := a.Instr.Block()
	for _, wb := range b.Parent().Blocks {
		if !wb.Dominates(b) {
			continue
		}
		for _, instr := range wb.Instrs {
			if wb == b && instr == a.Instr {
				break
			}
			if c, ok := instr.(*ssa.Call); ok && waits(c.Common()) {
				return true
			}
		}
	}
	return false
}

// waits reports whether c calls (*sync.WaitGroup).Wait or
// (*errgroup.Group).Wait.
func waits(c *ssa.CallCommon) bool {
	fn := c.StaticCallee()
	if fn == nil || fn.Name() != "Wait" || fn.Signature.Recv() == nil {
		return false
	}
	t := fn.Signature.Recv().Type()
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	switch n.Obj().Pkg().Path() + "." + n.Obj().Name() {
	case "sync.WaitGroup", "golang.org/x/sync/errgroup.Group":
		return true
	}
	return false
}

// syncObject reports whether t is a type of the sync package (or of the
// internal package its Mutex is built on) or of sync/atomic, whose
// values are only used through their methods (copying one is go vet's
// copylocks).
func syncObject(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	switch n.Obj().Pkg().Path() {
	case "sync", "internal/sync", "sync/atomic":
		return true
	}
	return false
}

// release is a pair of fields of one struct: some function of the
// package stores the first atomically, then the second: it publishes the
// first through the second (message passing).
type release struct{ stored, flag *types.Var }

// releases returns the package's pairs of fields that a function stores
// atomically one after the other on the same value.
func releases(res *regions.Result) map[release]bool {
	out := map[release]bool{}
	for _, f := range res.Funcs {
		for _, s := range f.Accesses {
			if !atomicWrite(s) || !s.Var.IsField() {
				continue
			}
			for _, r := range f.Accesses {
				if r != s && atomicWrite(r) && r.Var.IsField() && r.Var != s.Var &&
					siblings(s.Path, r.Path) && regions.Reaches(s.Instr, r.Instr) {
					out[release{s.Var, r.Var}] = true
				}
			}
		}
	}
	return out
}

func atomicWrite(a *regions.Access) bool {
	return a.Atomic != "" && a.Atomic != "Load" && a.Via == "" && a.Var != nil && a.Instr != nil
}

// acquired reports whether the plain read a comes after an atomic load,
// in its own function, of a field through which the package publishes
// a's field: the load-acquire orders the read after the store it
// publishes. A later store can still run with the read, and code that
// reads so (a load-consume after a load-acquire) is written to accept
// either value: the read is not reported.
func acquired(f *regions.Func, a *regions.Access, released map[release]bool) bool {
	if a.Kind != regions.Read || !a.Var.IsField() || a.Instr == nil {
		return false
	}
	for _, l := range f.Accesses {
		if l.Atomic == "Load" && l.Via == "" && l.Var != nil && l.Instr != nil && released[release{a.Var, l.Var}] &&
			siblings(a.Path, l.Path) && regions.Dominates(l.Instr, a.Instr) {
			return true
		}
	}
	return false
}

// siblings reports whether two paths name fields of the same value.
func siblings(a, b regions.Path) bool {
	if len(a.Fields) == 0 || len(a.Fields) != len(b.Fields) {
		return false
	}
	pa, pb := a, b
	pa.Fields, pb.Fields = a.Fields[:len(a.Fields)-1], b.Fields[:len(b.Fields)-1]
	return pa.Key() == pb.Key()
}

// where describes an atomic access for a message: "atomic.Add at s.go:12".
func where(fset *token.FileSet, a *regions.Access) string {
	p := fset.Position(a.Pos)
	return fmt.Sprintf("atomic.%s at %s:%d", a.Atomic, filepath.Base(p.Filename), p.Line)
}

// atomicType reports whether t is one of sync/atomic's types, or an
// array or slice of them, whose values cannot be accessed plainly. It
// looks through one level of array or slice only: a type may contain
// itself (type T []T).
func atomicType(t types.Type) bool {
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Array:
		t = u.Elem()
	case *types.Slice:
		t = u.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "sync/atomic"
}
