package record

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/types"
	"reflect"
	"strconv"

	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
	"golang.org/x/tools/go/ssa"
)

// Map elements.
//
// Every element of a map is a variable of its own: m[k] is read by
// m[k] and v, ok := m[k], written by m[k] = v and delete(m, k), and
// read then written by m[k] op= v and m[k]++. The recorder identifies the
// element by the map (the runtime's map pointer, the map value, not the
// address of the variable holding it) and the key's value, so that an
// element that does not exist yet (a miss, then the store that inserts
// it) is the same variable at both accesses, and so is an element the
// runtime moves when the map grows. Keys of integer, boolean and string
// type are recorded; any other key leaves the access as it was before
// map elements were recorded (the element's slot, if it exists). The
// reads of the variable holding the map (c.m in c.m[k]) are probes of
// their own and stay reads of that variable.
//
// A map's contents are one more variable of the map, with the key "*":
// len(m) and range m read it, and every write of an element writes it
// too, so that an element's write conflicts with them. An element's read
// does not read it: the predictors would take a region that reads and
// writes one element for a region of the contents, interleaved by any
// write of another key. clear is not recorded as a write of either.
//
// The trace's object ids. A variable, lock, WaitGroup, Cond, channel or
// Once is identified by its address, which is below 1<<48 in the address
// spaces Delve supports (and above the first page, which is never
// mapped). A channel or Once that the runtime places at a collected one's
// address gets addr | gen<<48 (gen = 1, 2, ..., chanObj and syncOp's
// Once.Do), below 1<<63 while an address is reused fewer than 1<<15
// times. A map element gets mapElemBase + n, n numbering the run's
// distinct (map, key) pairs from zero: bit 63 is set, which neither of the
// others sets. (Beyond 1<<15 reuses of one address, a generation id could
// only meet an element's if the run had recorded more distinct elements
// than that address's value, which is millions at least.)
const mapElemBase trace.ObjID = 1 << 63

// maxKeyLen is the longest string key recorded, in bytes: a longer key
// is not loaded whole, and is not guessed from its prefix (the access
// counts as unevaluated).
const maxKeyLen = 64

var loadKey = proc.LoadConfig{MaxStringLen: maxKeyLen}

// mapElemKey identifies a map element during a recording, or another
// object without an address of its own (derivedID).
type mapElemKey struct {
	m   uint64 // the map pointer (a channel's id, an atomic's address: derivedID)
	key string // the key's value, as mapKeyText writes it
}

// mapElement returns, for an access to a map element, the source
// expressions of the map and of the key: "c.m" and "key" for c.m[key] and
// for delete(c.m, key). It returns "", "" for every other access, and for
// an expression it cannot parse (the analyzer abbreviates long ones).
func mapElement(a *regions.Access) (m, key string) {
	switch in := a.Instr.(type) {
	case *ssa.MapUpdate:
	case *ssa.Lookup:
		if _, ok := in.X.Type().Underlying().(*types.Map); !ok {
			return "", "" // a byte of a string
		}
	case *ssa.Call:
		if b, ok := in.Call.Value.(*ssa.Builtin); !ok || b.Name() != "delete" {
			return "", ""
		}
	default:
		return "", ""
	}
	e, err := parser.ParseExpr(a.Expr)
	if err != nil {
		return "", ""
	}
	switch e := e.(type) {
	case *ast.IndexExpr:
		return types.ExprString(e.X), types.ExprString(e.Index)
	case *ast.CallExpr:
		if id, ok := e.Fun.(*ast.Ident); ok && id.Name == "delete" && len(e.Args) == 2 {
			return types.ExprString(e.Args[0]), types.ExprString(e.Args[1])
		}
	}
	return "", ""
}

// mapContents returns, for len(m) and range m of a map, the source
// expression of the map: "c.m" for len(c.m) and for range c.m. It returns
// "" for every other access.
func mapContents(a *regions.Access) string {
	switch in := a.Instr.(type) {
	case *ssa.Range:
		if _, ok := in.X.Type().Underlying().(*types.Map); !ok {
			return ""
		}
		if _, err := parser.ParseExpr(a.Expr); err != nil {
			return ""
		}
		return a.Expr
	case *ssa.Call:
		b, ok := in.Call.Value.(*ssa.Builtin)
		if !ok || b.Name() != "len" || len(in.Call.Args) != 1 {
			return ""
		}
		if _, ok := in.Call.Args[0].Type().Underlying().(*types.Map); !ok {
			return ""
		}
		e, err := parser.ParseExpr(a.Expr)
		if err != nil {
			return ""
		}
		if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 1 {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "len" {
				return types.ExprString(c.Args[0])
			}
		}
	}
	return ""
}

// contentsAccess returns the event of an access to the contents of the
// map that expression m evaluates to: a read for len(m) and range m, a
// write for a write of any of its elements. It reports false when m is
// not a map, or is nil (nothing can be stored in a nil map).
func (r *recorder) contentsAccess(scope *proc.EvalScope, l Line, p AccessProbe, m string, write bool) (trace.Event, bool) {
	mv, err := scope.EvalExpression(m, loadScalar)
	if err != nil || mv.Kind != reflect.Map || mv.Unreadable != nil || mv.Base == 0 {
		return trace.Event{}, false
	}
	obj := r.mapElemID(mapElemKey{m: mv.Base, key: contentsKey}, m+"[*]")
	e := trace.Event{Kind: trace.KindRead, Obj: obj, Site: r.site(l, p.Col, p.Func)}
	if write {
		e.Kind = trace.KindWrite
	}
	return e, true
}

// contentsKey stands for a map's contents in a mapElemKey: no key's text
// (mapKeyText) is "*".
const contentsKey = "*"

// mapElemAccess turns probe p, an access to a map element, into its
// event. It reports false when the access is not recorded as an element
// (the map's key type is not an integer, boolean or string, or p.Map does
// not evaluate to a map): the caller records it as any other access. An
// access it cannot evaluate is counted in r.unevaluated and returned
// with KindInvalid.
func (r *recorder) mapElemAccess(scope *proc.EvalScope, l Line, p AccessProbe) (trace.Event, bool) {
	mv, err := scope.EvalExpression(p.Map, loadScalar)
	if err != nil || mv.Kind != reflect.Map || mv.Unreadable != nil {
		return trace.Event{}, false
	}
	mt, ok := mv.RealType.(*godwarf.MapType)
	if !ok || !recordedKey(mt.KeyType) {
		return trace.Event{}, false
	}
	if mv.Base == 0 {
		// A nil map: nothing can be stored in it, so its reads conflict
		// with nothing, and a store panics.
		r.unevaluated++
		return trace.Event{}, true
	}
	kv, err := scope.EvalExpression(p.Key, loadKey)
	if err != nil {
		r.unevaluated++
		return trace.Event{}, true
	}
	key, ok := mapKeyText(kv)
	if !ok {
		r.unevaluated++
		return trace.Event{}, true
	}
	obj := r.mapElemID(mapElemKey{m: mv.Base, key: key}, p.Map+"["+key+"]")
	e := trace.Event{Kind: trace.KindRead, Obj: obj, Site: r.site(l, p.Col, p.Func)}
	if p.Write {
		e.Kind = trace.KindWrite
		return e, true
	}
	// The element's value, if it is present: a read of a missing key
	// (v, ok := m[k] with ok false) has no value to record, not the
	// element type's zero.
	if ev, err := scope.EvalExpression("("+p.Map+")["+p.Key+"]", loadScalar); err == nil {
		if val, ok := scalar(ev); ok {
			e.Value, e.Flags = val, trace.HasValue
		}
	}
	return e, true
}

// mapElemID returns the object id of a map element, declaring it with
// the given name on first use.
func (r *recorder) mapElemID(k mapElemKey, name string) trace.ObjID {
	return r.derivedID(k, trace.Object{Kind: trace.ObjVar, Name: name})
}

// derivedID returns the object id of an object that has no address of
// its own: a map element or contents, a channel's state or an atomic
// variable's lock (shadow.go), numbered from mapElemBase and declared as
// o on first use. The key's text tells the kinds apart: no map key's
// text (mapKeyText) is contentsKey, chanStateKey or atomicLockKey.
func (r *recorder) derivedID(k mapElemKey, o trace.Object) trace.ObjID {
	if id, ok := r.mapElems[k]; ok {
		return id
	}
	if r.mapElems == nil {
		r.mapElems = make(map[mapElemKey]trace.ObjID)
	}
	id := mapElemBase + trace.ObjID(len(r.mapElems))
	r.mapElems[k] = id
	r.t.Objects[id] = o
	return id
}

// recordedKey reports whether a map with keys of type t has its elements
// recorded as variables: integers, booleans and strings.
func recordedKey(t godwarf.Type) bool {
	switch godwarf.ResolveTypedef(t).(type) {
	case *godwarf.IntType, *godwarf.UintType, *godwarf.CharType, *godwarf.UcharType,
		*godwarf.BoolType, *godwarf.StringType:
		return true
	}
	return false
}

// mapKeyText writes a key's value as Go source: 7, -3, true, "k". It
// reports false for a value it cannot write exactly: a string longer than
// the recorder loads, or a value of another kind.
func mapKeyText(v *proc.Variable) (string, bool) {
	if v.Unreadable != nil || v.Value == nil {
		return "", false
	}
	switch v.Kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := constant.Int64Val(v.Value)
		return strconv.FormatInt(n, 10), ok
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := constant.Uint64Val(v.Value)
		return strconv.FormatUint(n, 10), ok
	case reflect.Bool:
		return strconv.FormatBool(constant.BoolVal(v.Value)), true
	case reflect.String:
		s := constant.StringVal(v.Value)
		if int64(len(s)) != v.Len {
			return "", false // loaded in part
		}
		return strconv.Quote(s), true
	}
	return "", false
}
