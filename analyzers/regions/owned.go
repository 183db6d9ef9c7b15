package regions

import (
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// A constructor often sets up its new object through the helper its
// methods call with the object's lock held:
//
//	b := new(Breaker)
//	b.newGeneration(now) // b is not shared yet
//	return b
//
// Until the caller lets the object escape (escape.go), no other goroutine
// can reach it: the call is made, as an initialisation is, with every
// lock of the object as good as held. Such a parameter is owned in the
// way the function is entered, and the object's own state (its fields,
// and the fields of struct values inside it, not what its pointers,
// slices or maps lead to) needs no lock there.

// ownedArgs returns the parameters of c's callee that c passes an
// object its caller owns (Call.Owned), or a parameter that the caller's
// own way of being entered owns (callerOwned).
func ownedArgs(c caller, callerOwned []int) []int {
	out := slices.Clone(c.call.Owned)
	for i, a := range c.call.Args {
		if a != nil && len(a.Fields) == 0 && a.Root.Kind == RootParam && slices.Contains(callerOwned, a.Root.Index) && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// ownedArgs returns the positions of args that are objects the function
// allocated (new(T), &T{}, a variable whose address it takes) or got
// fresh from a constructor, or struct values held inside one, and has
// not let escape by the call at. A
// pointer loaded from a local variable counts only when that variable is
// only ever given this one object.
func (fa *funcAnalysis) ownedArgs(args []ssa.Value, at ssa.Instruction) []int {
	var out []int
	for i, a := range args {
		a = containing(a)
		if !fa.ownedObject(a) {
			continue
		}
		if p, ok := fa.pathOf(a); ok && len(p.Fields) == 0 && !fa.escapedAt(p, at).Shared() {
			out = append(out, i)
		}
	}
	return out
}

// containing returns the object that the address v points inside, where
// v is the address of a struct value held in it (&c.buckets[i], with
// buckets an array): that value's state is the object's own. Anything
// else is returned as it is.
func containing(v ssa.Value) ssa.Value {
	for range maxPathDepth {
		switch x := v.(type) {
		case *ssa.FieldAddr:
			v = x.X
		case *ssa.IndexAddr:
			if _, array := x.X.Type().Underlying().(*types.Pointer); !array {
				return v // a slice's element: slices share arrays
			}
			v = x.X
		default:
			return v
		}
	}
	return v
}

// ownedObject reports whether v is an object of the function's own: an
// allocation, a constructor's fresh result, or the one value stored in a
// local variable that is such an object.
func (fa *funcAnalysis) ownedObject(v ssa.Value) bool {
	switch x := v.(type) {
	case *ssa.Alloc:
		return true
	case *ssa.UnOp:
		a, ok := x.X.(*ssa.Alloc)
		if !ok || x.Op != token.MUL {
			return false
		}
		s := onlyStored(a)
		return s != nil && fa.ownedObject(s)
	case *ssa.Call, *ssa.Extract:
		_, ok := fa.freshCall(v)
		return ok
	}
	return false
}

// Owns reports whether p, a path of fn, is the state of an object that
// c owns: p starts at an owned parameter and stays inside the object it
// points to.
func (c Context) Owns(fn *ssa.Function, p Path) bool {
	return owns(fn, c.Owned, p)
}

func owns(fn *ssa.Function, owned []int, p Path) bool {
	if p.Root.Kind != RootParam || !slices.Contains(owned, p.Root.Index) || p.Root.Index >= len(fn.Params) || len(p.Fields) == 0 {
		return false
	}
	ptr, ok := types.Unalias(fn.Params[p.Root.Index].Type()).Underlying().(*types.Pointer)
	if !ok {
		return false
	}
	t := ptr.Elem()
	for i, f := range p.Fields {
		switch t.Underlying().(type) {
		case *types.Struct:
			if f == elem {
				return false
			}
		case *types.Array:
			if f != elem {
				return false
			}
		default:
			return false
		}
		if i < len(p.Fields)-1 {
			if t = step(t, f); t == nil {
				return false
			}
		}
	}
	return true
}

// entryState is what EntryLocks knows of the calls of a function so far:
// the locks they hold and the parameters they all own.
type entryState struct {
	held  []Held
	owned []int
}

// meetOwned returns the locks held in both a and b, where a lock of an
// object that one of them owns counts as held there, and the parameters
// both own.
func meetOwned(fn *ssa.Function, a, b entryState) entryState {
	var out entryState
	for _, x := range a.held {
		if i := slices.IndexFunc(b.held, func(y Held) bool { return y.Lock.Key() == x.Lock.Key() }); i >= 0 {
			out.held = append(out.held, Held{Lock: x.Lock, Read: x.Read || b.held[i].Read})
		} else if owns(fn, b.owned, x.Lock) {
			out.held = append(out.held, x)
		}
	}
	for _, y := range b.held {
		if !slices.ContainsFunc(a.held, func(x Held) bool { return x.Lock.Key() == y.Lock.Key() }) && owns(fn, a.owned, y.Lock) {
			out.held = append(out.held, y)
		}
	}
	for _, i := range a.owned {
		if slices.Contains(b.owned, i) {
			out.owned = append(out.owned, i)
		}
	}
	return out
}
