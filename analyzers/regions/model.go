package regions

import (
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// RootKind says where a Path starts.
type RootKind uint8

// The kinds of path root.
const (
	RootParam  RootKind = iota + 1 // a parameter or the receiver, by index
	RootGlobal                     // a package-level variable
	RootFree                       // a variable captured by a closure, by index
	RootLocal                      // a variable or object of the function itself: shared once it escapes
)

// Root is where a Path starts. It is gob-encodable, so it travels in
// Facts; in a Result, it is relative to the function that holds it.
type Root struct {
	Kind  RootKind
	Index int    // parameter (receiver first) or free variable index
	ID    string // package-level variable: "pkgpath.Name"; local: the SSA name
	Name  string // how the source names the root, for messages
	// Escaped says a local root has escaped to another goroutine by the
	// access (escape.go): its state is shared from there on. Key ignores
	// it: the state is the same before and after.
	Escaped bool
}

// Same reports whether r and o are the same root, escaped or not.
func (r Root) Same(o Root) bool {
	return r.Kind == o.Kind && r.Index == o.Index && r.ID == o.ID
}

// Path names a piece of state reached from a root through fields and
// elements, such as c.mu, c.items[] or pkg.cache[]. It is the unit of
// "the same state" throughout avcheck.
type Path struct {
	Root   Root
	Fields []string // field names; "[]" stands for an element of a slice, array or map
}

// Key is a string that is equal for two paths exactly when they name the
// same state from the same function.
func (p Path) Key() string {
	var b strings.Builder
	switch p.Root.Kind {
	case RootParam:
		b.WriteString("p")
		b.WriteString(strconv.Itoa(p.Root.Index))
	case RootFree:
		b.WriteString("f")
		b.WriteString(strconv.Itoa(p.Root.Index))
	case RootGlobal:
		b.WriteString("g:")
		b.WriteString(p.Root.ID)
	case RootLocal:
		b.WriteString("l:")
		b.WriteString(p.Root.ID)
	}
	for _, f := range p.Fields {
		b.WriteByte('.')
		b.WriteString(f)
	}
	return b.String()
}

// String returns the path as the source would write it: c.n, c.m[].
func (p Path) String() string {
	var b strings.Builder
	b.WriteString(p.Root.Name)
	for _, f := range p.Fields {
		if f == elem {
			b.WriteString(elem)
			continue
		}
		b.WriteByte('.')
		b.WriteString(f)
	}
	return b.String()
}

// Shared reports whether the path can reach state that other goroutines
// see: everything but a function's own variables and objects that have
// not escaped.
func (p Path) Shared() bool { return p.Root.Kind != RootLocal || p.Root.Escaped }

func (p Path) with(field string) Path {
	fs := make([]string, len(p.Fields), len(p.Fields)+1)
	copy(fs, p.Fields)
	return Path{Root: p.Root, Fields: append(fs, field)}
}

// elem is the path component of an element of a slice, array or map.
const elem = "[]"

// AccessKind says whether an access reads or writes.
type AccessKind uint8

// The access kinds.
const (
	Read AccessKind = iota + 1
	Write
)

func (k AccessKind) String() string {
	if k == Write {
		return "write"
	}
	return "read"
}

// Held is a lock held at an access.
type Held struct {
	Lock Path
	Read bool // held with RLock
	// CS identifies the critical section: one acquisition of the lock.
	// Two accesses under the same lock with different CS values are in
	// two critical sections, with the lock released in between. CS values
	// are unique within one function.
	CS int
}

// Access is one access to shared state, made by the function directly or
// through a call whose Facts say the callee makes it.
type Access struct {
	Path Path
	Kind AccessKind
	// Atomic is the sync/atomic operation's name ("Load", "Store", "Add",
	// "Swap", "CompareAndSwap", "And", "Or"), or "" for a plain access.
	Atomic string
	// Sync says the state is itself a synchronisation object (a channel,
	// a sync or sync/atomic value): BEST's synchronisation variables.
	Sync bool
	Pos  token.Pos // where the source expression starts
	Expr string    // the source expression: "c.n", "q.items[0]", "s.Config()"
	// Via is the callee, as "(*pkg.T).M", when the access happens inside a
	// call; Pos and Expr are then the call's.
	Via string
	// Held lists the locks held at the access, outermost first.
	Held []Held
	// CondHeld lists the locks held at the access when a boolean
	// parameter of its function has a value (condlock.go).
	CondHeld []CondHeld
	// Rechecked says that, within the write's own critical section, a
	// read of the same state decides whether it happens: the write
	// re-validates what it depends on (double-checked locking).
	Rechecked bool
	// Rechecks, on a read, says it is such a check: its value decides,
	// in its own critical section, a write of the state it read. What the
	// code does from there rests on it, not on an earlier read.
	Rechecks bool
	// Refreshed says that the write's own critical section also reads the
	// state (c.n += d): the write cannot lose an update made before its
	// critical section.
	Refreshed bool
	// Claimed says that the write's own critical section tests and sets a
	// flag that decides whether it happens (if w.done { return }; ...;
	// w.done = true): however stale a check made before the section, one
	// such write ever passes.
	Claimed bool
	// Decides says that a read decides a write in its own critical
	// section (if s.cur+n <= s.size { s.cur += n }): what the function
	// returns of it reports what that section did, an acquisition or a
	// claim, not state that a caller could act on once it is stale.
	Decides bool
	// Var is the struct field or package-level variable accessed, for a
	// direct access to one; nil for elements and accesses through calls.
	Var *types.Var
	// Instr is the SSA instruction of the access or of the call.
	Instr ssa.Instruction

	key   string      // Path.Key(), once asked (stateKey)
	seeds []ssa.Value // for a read: the values that carry what it read
	srcs  []ssa.Value // for a write: the values that make what it writes
}

// stateKey returns a.Path.Key(), computed once.
func (a *Access) stateKey() string {
	if a.key == "" {
		a.key = a.Path.Key()
	}
	return a.key
}

// RootText returns how the source names the root of a's path at a: the
// expression before its fields (c in c.n, s.conns[i] in s.conns[i].mu
// when that is how a is written), else the root's name.
func (a *Access) RootText() string {
	fields := Path{Fields: a.Path.Fields}.String()
	if a.Via == "" && fields != "" && len(a.Expr) > len(fields) && strings.HasSuffix(a.Expr, fields) {
		return a.Expr[:len(a.Expr)-len(fields)]
	}
	return a.Path.Root.Name
}

// HeldLock returns the entry of a.Held for the lock with the given key.
func (a *Access) HeldLock(key string) (Held, bool) {
	for _, h := range a.Held {
		if h.Lock.Key() == key {
			return h, true
		}
	}
	return Held{}, false
}

// RegionKind says where a region comes from, in decreasing confidence.
type RegionKind uint8

// The region kinds.
const (
	Annotated RegionKind = iota + 1 // //avcheck:atomic
	LockScope                       // Lock to the matching Unlock, outermost
	Proximity                       // nearby shared accesses (BEST section V)
)

func (k RegionKind) String() string {
	switch k {
	case Annotated:
		return "annotated"
	case LockScope:
		return "lock"
	case Proximity:
		return "proximity"
	}
	return "unknown"
}

// Region is an intended atomic region: a stretch of one function's code
// meant to run without interference.
type Region struct {
	Kind RegionKind
	Func *ssa.Function
	Pos  token.Pos // where it begins (the Lock, the "{", the first access)
	End  token.Pos // where it ends (the Unlock, the "}", the last access)
	// Lock is the lock of a LockScope region.
	Lock *Path
	// Accesses are the accesses inside, in source order.
	Accesses []*Access
	// Intent is the evidence that the region is meant to be atomic
	// (intent.go): a proximity region without any is only proposed.
	Intent Intent
}

// SyncOp is an operation that creates happens-before between goroutines:
// BEST's region boundaries.
type SyncOp struct {
	Pos  token.Pos
	What string // "go statement", "channel send", "WaitGroup.Wait", ...
}

// Call is a static call the function makes, with the locks held there.
type Call struct {
	Instr  *ssa.Call
	Callee *ssa.Function
	Held   []Held
	// CondHeld are the locks held at the call when a boolean parameter
	// of the caller is true (condlock.go).
	CondHeld []CondHeld
	// OnlyIf are the values of the caller's boolean parameters that the
	// call needs to run (condlock.go).
	OnlyIf []ParamCond
	// Args are the paths of the arguments, and Bindings those of the
	// variables a called closure captures, where they have one.
	Args     []*Path
	Bindings []*Path
	// Owned are the argument positions given an object that the caller
	// allocated, or got fresh from a constructor, and has not let escape
	// by the call (owned.go).
	Owned []int
	// Callbacks are the argument positions the callee only calls, in this
	// goroutine before it returns (its Summary's Callbacks), and Closures
	// the closures passed in those positions.
	Callbacks []int
	Closures  []ClosureArg
}

// ClosureArg is a closure passed as an argument that the callee calls
// synchronously.
type ClosureArg struct {
	Fn       *ssa.Function
	Bindings []*Path // the paths of the variables it captures
	// Held are the locks a deferred closure runs with (Func.Deferred).
	Held []Held
}

// Func is what the analyzer learned about one function.
type Func struct {
	Fn       *ssa.Function
	Accesses []*Access // in instruction order
	Calls    []Call    // static calls, in instruction order
	// DynCalls are the calls of function values (not of interface
	// methods), with the locks held there; only Instr and Held are set.
	DynCalls []Call
	// Deferred are the closures the function defers, each with the
	// locks held when it runs (build.go collectDeferred).
	Deferred []ClosureArg
	SyncOps  []SyncOp
	Regions  []*Region
	Summary  *Summary
	// Linked says a //go:linkname directive names the function: another
	// package calls it by name, in a context its own package does not
	// show, so what can run at the same time as it is not known.
	Linked bool

	flows *flowCache
}

// Result is the regions analyzer's result: every function of the package
// with its accesses and intended atomic regions. It is the probe plan of
// the dynamic recorder, and the input of the reporting analyzers.
type Result struct {
	Funcs  []*Func // in source order
	ByFunc map[*ssa.Function]*Func
}
