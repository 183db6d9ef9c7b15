package record

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/types"
	"reflect"

	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/dynamic/record/avrt"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
	"golang.org/x/tools/go/ssa"
)

// copy(dst, src) reads the first n elements of src and writes the first n
// of dst, n the smaller of their lengths. Both recorders record those
// accesses element by element, each a variable of its own as dst[i] is
// when the program indexes it, so that a copy conflicts with the accesses
// of the elements it touches. A copy of more elements records the first
// avrt.MaxElems: a copy of a large buffer would otherwise fill the trace
// with events of one statement. The rest are not recorded, as any access
// that is not (docs/run.md, Limitations): a violation on a later element
// is not predicted.

// copyArgs returns the source expressions of the arguments of a, an
// access made by a call of the copy builtin, and whether its source is a
// string (whose bytes no goroutine writes); ok is false for any other
// access.
func copyArgs(a *regions.Access) (dst, src string, str, ok bool) {
	call, isCall := a.Instr.(*ssa.Call)
	if !isCall {
		return "", "", false, false
	}
	if b, isBuiltin := call.Call.Value.(*ssa.Builtin); !isBuiltin || b.Name() != "copy" || len(call.Call.Args) != 2 {
		return "", "", false, false
	}
	e, err := parser.ParseExpr(a.Expr)
	if err != nil {
		return "", "", false, false
	}
	c, isCallExpr := e.(*ast.CallExpr)
	if !isCallExpr || len(c.Args) != 2 {
		return "", "", false, false
	}
	if id, isIdent := c.Fun.(*ast.Ident); !isIdent || id.Name != "copy" {
		return "", "", false, false
	}
	if b, isBasic := call.Call.Args[1].Type().Underlying().(*types.Basic); isBasic && b.Info()&types.IsString != 0 {
		str = true
	}
	return types.ExprString(c.Args[0]), types.ExprString(c.Args[1]), str, true
}

// copyElems records, for the Delve recorder, the accesses of p, the read
// of copy's source or the write of its destination: one event per element,
// the first avrt.MaxElems of them. It reports false when the slices cannot
// be evaluated.
func (r *recorder) copyElems(gs *gstate, scope *proc.EvalScope, l Line, p AccessProbe) bool {
	s, err := scope.EvalExpression(p.Elems, loadScalar)
	if err != nil || s.Unreadable != nil || s.Kind != reflect.Slice {
		return false
	}
	other, err := scope.EvalExpression(p.Other, loadScalar)
	if err != nil || other.Unreadable != nil {
		return false
	}
	n, ok := length(other)
	if !ok {
		return false
	}
	n = min(n, uint64(max(s.Len, 0)), avrt.MaxElems)
	st, ok := s.RealType.(*godwarf.SliceType)
	if !ok || st.ElemType == nil {
		return false
	}
	size := uint64(max(st.ElemType.Size(), 0))
	if n == 0 || size == 0 || s.Base == 0 || s.Base >= proc.FakeAddressBase {
		return true // nothing to record: no element, or none with an address
	}
	kind := trace.KindRead
	if p.Write {
		kind = trace.KindWrite
	}
	site := r.site(l, p.Col, p.Func)
	for i := range n {
		obj := trace.ObjID(s.Base + i*size)
		if _, ok := r.t.Objects[obj]; !ok {
			r.t.Objects[obj] = trace.Object{Kind: trace.ObjVar, Name: elemsName(p)}
		}
		r.emit(gs, trace.Event{Kind: kind, Obj: obj, Site: site})
	}
	return true
}

// elemsName names the elements a copy accesses, as its site's object:
// "b.data[*]".
func elemsName(p AccessProbe) string { return p.Elems + "[*]" }

// copyProbe returns, for the instrumenting recorder, the probe of p, the
// read of copy's source or the write of its destination, placed before
// st: avrt.ReadElems(src, dst, site) or avrt.WriteElems(dst, src,
// site). It returns why not where it cannot be placed there.
func (w *fileRewriter) copyProbe(st ast.Stmt, found ast.Expr, inPlace bool, p AccessProbe, site uint32) (ast.Stmt, ast.Expr, string, string) {
	call, ok := ast.Unparen(found).(*ast.CallExpr)
	if !ok || len(call.Args) != 2 || call.Ellipsis.IsValid() {
		return nil, nil, "", "not a call of copy"
	}
	if inPlace {
		return nil, nil, "", "a copy in a case of a switch, or naming a variable its own statement declares"
	}
	if !w.pureSlice(call.Args[0]) || !w.pureSlice(call.Args[1]) {
		return nil, nil, "", callsWhy
	}
	// The probe takes both slices, not a length: the function's own len
	// may be a variable (func (q *Queue) copy(data []byte, len int)).
	// The slice whose elements it records comes first.
	elems, other, fn := call.Args[0], call.Args[1], "WriteElems"
	if t, ok := w.info.TypeOf(other).Underlying().(*types.Basic); ok && t.Info()&types.IsString != 0 {
		fn = "WriteElemsString"
	}
	if !p.Write {
		elems, other, fn = call.Args[1], call.Args[0], "ReadElems"
	}
	probe := fmt.Sprintf("%s.%s(%s, %s, %s)", rtName, fn, w.text(elems), w.text(other), w.siteID(site))
	return st, found, w.guarded(found, st, probe), ""
}

// pureSlice is pure, but for a slice expression, which pure does not
// allow, as its value has no address: copy's arguments are often one
// (copy(b.buf[n:], p)), and a probe may evaluate it again.
func (w *fileRewriter) pureSlice(e ast.Expr) bool {
	s, ok := ast.Unparen(e).(*ast.SliceExpr)
	if !ok {
		return w.pure(e)
	}
	for _, x := range []ast.Expr{s.Low, s.High, s.Max} {
		if x != nil && !w.pure(x) {
			return false
		}
	}
	return w.pureSlice(s.X)
}
