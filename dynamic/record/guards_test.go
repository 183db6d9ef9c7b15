package record

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// guardsSrc has a function for each kind of use that the analysis
// accepts and for each it refuses. The fields of T and the variable g
// stand for shared state: their loads are the reads, their stores the
// recorded writes.
const guardsSrc = `package p

type T struct {
	n, m  int
	u8    uint8
	u64   uint64
	ok    bool
	buf   [4]int
	s     []int
	str   string
}

var g int

func use(int) {}

func cmpConst(t *T)             { if t.n < 10 { g = 1 } }
func cmpFlipped(t *T)           { if 10 <= t.n { g = 1 } }
func cmpParam(t *T, amt int)    { for t.n < amt { g++ } }
func cmpTwo(t *T)               { n := t.n; if n != 4 && n > 0 { g = 1 } }
func assignedParam(t *T, amt int) { amt++; if t.n < amt { g = 1 } }
func addressedParam(t *T, amt int) { p := &amt; use(*p); if t.n < amt { g = 1 } }
func shadowedParam(t *T, amt int) { if t.n < amt { amt := 3; use(amt) } }
func cmpRead(t *T)              { if t.n < t.m { g = 1 } }
func cmpStored(t *T)            { t.ok = t.n < 3 }
func cmpReturned(t *T) bool     { return t.n < 3 }
func store(t *T)                { t.m = t.n*2 + 1 }
func storeGlobal(t *T)          { g = t.n &^ 3 }
func storeEscaped(t *T) *int    { x := t.n; return &x }
func dividend(t *T)             { t.m = t.n / 2 % 7 >> 1 }
func divisor(t *T)              { t.m = 100 / t.n }
func shiftCount(t *T)           { t.m = 1 << t.n }
func callArg(t *T)              { use(t.n) }
func loop(t *T)                 { for i := t.n; i < 10; i++ { g = i } }
func phi(t *T)                  { n := t.n; if g > 0 { n = 5 }; if n < 3 { g = 1 } }
func phiStore(t *T)             { n := t.n + 1; if g > 0 { n = 0 }; t.m = n }
func phiStoreCmp(t *T)          { n := t.n + 1; if g > 0 { n = 0 }; if n > 2 { g = 1 } }
func convert(t *T)              { if int8(t.n) < 3 { g = 1 } }
func unsigned(t *T)             { if t.u8 > 200 { g = 1 } }
func unsigned64(t *T)           { if t.u64 > 5 { g = 1 } }
func hugeConst(t *T)            { if t.u64 > 1<<63 { g = 1 } }
func index(t *T, e int)         { n := t.n; if n == len(t.buf) { n = 0 }; t.buf[n] = e; t.n = n + 1 }
func indexRead(t *T) int        { return t.buf[t.n] }
func indexSlice(t *T, e int)    { t.s[t.n] = e }
func length(t *T)               { for len(t.s) == 0 { g++ } }
func lengthStr(t *T)            { if len(t.str) > 3 { g = 1 } }
func lengthAndElem(t *T) int    { if len(t.s) > 0 { return t.s[0] }; return 0 }
func sliceAppend(t *T)          { t.s = append(t.s, 1) }
func unused(t *T)               { _ = t.n }

func size(t *T) int             { return len(t.s) }
func waitSize(t *T)             { for size(t) == 0 { g++ } }
func sizeAbove(t *T, k int)     { if size(t) >= k { g = 1 } }
func sizeStored(t *T)           { t.m = size(t) }
func sizeTwice(t *T)            { if size(t) == 0 || size(t) == 1 { g = 1 } }
func sizeDeferred(t *T)         { defer size(t); if size(t) == 0 { g = 1 } }
func sizeMultiLine(t *T) {
	if size(
		t) == 0 {
		g = 1
	}
}

func get(t *T) (int, bool)      { if t.m > 0 { return t.n, true }; return 0, false }
func useGet(t *T)               { if n, ok := get(t); ok && n > 3 { g = 1 } }

func never(t *T) int            { return t.m }

type M struct{}

func (*M) Lock()   {}
func (*M) Unlock() {}

type Q struct {
	mu     M
	events []int
	n      int
}

func (q *Q) Size() int          { q.mu.Lock(); defer q.mu.Unlock(); return len(q.events) }
func (q *Q) Named() (n int)     { defer q.mu.Unlock(); return q.n }
func (q *Q) Changed() (n int)   { defer func() { n++ }(); return q.n }
func (q *Q) Wait()              { for q.Size() == 0 || q.Named() < 2 || q.Changed() > 3 { g++ } }

func captured(t *T) func() int  { x := t.n; return func() int { return x } }
func deferArg(t *T)             { defer use(t.n) }
func goArg(t *T)                { go use(t.n) }
func selectSend(t *T, c chan int) { select { case c <- t.n: default: } }
func mapKey(t *T, m map[int]int) { m[t.n] = 1 }
func boolRead(t *T)             { if t.ok { g = 1 } }
func wrapCmp(t *T)              { if uint8(t.n)+1 > 3 { g = 1 } }
func cmpUnsignedParam(t *T, k uint64) { if t.u64 < k { g = 1 } }
func switchType(t *T) { var v any = t.n; switch v.(type) { case int: g = 1 } }
func loopCarried(t *T) {
	prev := 0
	for i := 0; i < 2; i++ {
		cur := t.n
		if prev > 5 {
			g = 1
		}
		prev = cur
	}
}
`

// buildSrc builds the package p of one file, src, in SSA form.
func buildSrc(t *testing.T, src string) (*token.FileSet, *ssa.Package) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, _, err := ssautil.BuildPackage(&types.Config{}, fset, types.NewPackage("p", "p"), []*ast.File{f}, ssa.SanityCheckFunctions)
	if err != nil {
		t.Fatal(err)
	}
	return fset, pkg
}

// srcFuncs returns the functions of pkg written in its source, in the
// order of their positions.
func srcFuncs(pkg *ssa.Package) []*ssa.Function {
	var funcs []*ssa.Function
	for fn := range ssautil.AllFunctions(pkg.Prog) {
		if fn.Pkg == pkg && fn.Synthetic == "" {
			funcs = append(funcs, fn)
		}
	}
	slices.SortFunc(funcs, func(a, b *ssa.Function) int { return int(a.Pos() - b.Pos()) })
	return funcs
}

// guardsOf builds src and returns the guard of every load of a field or
// of a package variable, by "function.field" ("function.field#2" for a
// second load of the same field), as describeGuard writes it.
func guardsOf(t *testing.T, src string) map[string]string {
	t.Helper()
	fset, pkg := buildSrc(t, src)
	funcs := srcFuncs(pkg)
	shared := func(addr ssa.Value) (string, bool) {
		switch a := addr.(type) {
		case *ssa.FieldAddr:
			return a.X.Type().Underlying().(*types.Pointer).Elem().Underlying().(*types.Struct).Field(a.Field).Name(), true
		case *ssa.Global:
			return a.Name(), true
		case *ssa.IndexAddr:
			if _, ok := a.X.(*ssa.FieldAddr); ok {
				return "[]", true
			}
		}
		return "", false
	}
	recorded := func(s *ssa.Store) bool {
		_, ok := shared(s.Addr)
		return ok
	}
	calls := newCallIndex(funcs)
	out := make(map[string]string)
	for _, fn := range funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				load, ok := instr.(*ssa.UnOp)
				if !ok || load.Op != token.MUL {
					continue
				}
				name, ok := shared(load.X)
				if !ok {
					continue
				}
				key := fn.Name() + "." + name
				for i := 2; out[key] != ""; i++ {
					key = fmt.Sprintf("%s.%s#%d", fn.Name(), name, i)
				}
				a := &guardAnalysis{fset: fset, sizes: types.SizesFor("gc", "amd64"), recorded: recorded, calls: calls}
				out[key] = describeGuard(a.guard(load), fset)
			}
		}
	}
	return out
}

// describeGuard writes a guard as "none", or its bounds, its comparisons
// and its call sites: "len 0.. ==0", "0..3 ==4", "ret @waitSize:49[==0]".
func describeGuard(g *Guard, fset *token.FileSet) string {
	if g == nil {
		return "none"
	}
	var parts []string
	if g.Len {
		parts = append(parts, "len")
	}
	bounds := func(lo, hi int64) string {
		s := ".."
		if lo != math.MinInt64 {
			s = fmt.Sprint(lo) + s
		}
		if hi != math.MaxInt64 {
			s += fmt.Sprint(hi)
		}
		return s
	}
	cmps := func(cs []GuardCmp) string {
		var s []string
		for _, c := range cs {
			k := fmt.Sprint(c.K)
			if c.Param != "" {
				k = c.Param
			}
			s = append(s, c.Op.String()+k)
		}
		return strings.Join(s, " ")
	}
	parts = append(parts, bounds(g.Lo, g.Hi))
	if len(g.Cmps) > 0 {
		parts = append(parts, cmps(g.Cmps))
	}
	if g.Returned {
		parts = append(parts, "ret")
		for _, s := range g.Sites {
			site := fmt.Sprintf("@%s:%d[%s", strings.TrimPrefix(s.Func, "p."), s.Line, cmps(s.Cmps))
			if s.Lo != math.MinInt64 || s.Hi != math.MaxInt64 {
				site += " " + bounds(s.Lo, s.Hi)
			}
			parts = append(parts, site+"]")
		}
	}
	return strings.Join(parts, " ")
}

func TestGuardAnalysis(t *testing.T) {
	got := guardsOf(t, guardsSrc)
	want := map[string]string{
		// Comparisons with a constant or a parameter the function never
		// assigns, deciding branches.
		"cmpConst.n":   ".. <10",
		"cmpFlipped.n": ".. >=10",
		"cmpParam.n":   ".. <amt",
		"cmpParam.g":   "..",
		"cmpTwo.n":     ".. >0 !=4",
		// A parameter that is assigned, addressed or shadowed is not the
		// value the comparison saw when the debugger reads it.
		"assignedParam.n":  "none",
		"addressedParam.n": "none",
		"shadowedParam.n":  "none",
		// Compared with another read, or the outcome used otherwise.
		"cmpRead.n":     "none",
		"cmpRead.m":     "none",
		"cmpStored.n":   "none",
		"cmpReturned.n": "none",
		// The value of recorded writes, through arithmetic.
		"store.n":        "..",
		"storeGlobal.n":  "..",
		"storeEscaped.n": "none",
		"dividend.n":     "..",
		"divisor.n":      "none",
		"shiftCount.n":   "none",
		"callArg.n":      "none",
		"loop.n":         "none",
		// Phi nodes: the value as it is, or derived and written.
		"phi.n":         ".. <3",
		"phi.g":         ".. >0",
		"phiStore.n":    "..",
		"phiStore.g":    ".. >0",
		"phiStoreCmp.n": "none",
		"phiStoreCmp.g": ".. >0",
		// Conversions bound the range to the types.
		"convert.n":      "-128..127 <3",
		"unsigned.u8":    "0..255 >200",
		"unsigned64.u64": "0.. >5",
		"hugeConst.u64":  "none",
		// An array index whose element is written: its bounds.
		"index.n":      "0..3 ==4",
		"indexRead.n":  "none",
		"indexRead.[]": "none",
		"indexSlice.n": "none",
		"indexSlice.s": "none",
		// Lengths.
		"length.s":          "len 0.. ==0",
		"length.g":          "..",
		"lengthStr.str":     "len 0.. >3",
		"lengthAndElem.s":   "len 0.. >0",
		"lengthAndElem.s#2": "none",
		"sliceAppend.s":     "none",
		"unused.n":          "..",
		// A result compared by its callers, at the calls that are alone
		// on their line in their caller.
		// Not sizeStored (stored), sizeTwice (two calls on a line),
		// sizeDeferred (a deferred call could be at the return),
		// sizeMultiLine (a call on two lines).
		"waitSize.g": "..",
		"size.s":     "len 0.. ret @waitSize:52[==0] @sizeAbove:53[>=k]",
		"get.m":      ".. >0",
		"get.n":      ".. ret @useGet:65[>3]",
		"never.m":    "none",
		// Through the variable that holds the result while deferred calls
		// run, unless a deferred closure can change it.
		"Size.events": "len 0.. ret @(*p.Q).Wait:83[==0]",
		"Named.n":     ".. ret @(*p.Q).Wait:83[<2]",
		"Changed.n":   "none",
		"Wait.g":      "..",
		// Uses that pass the value on where no recorded write shows it
		// (a captured variable, a deferred or go call's argument, a
		// select's send, a map key, an interface), a boolean, and a
		// comparison after a conversion and arithmetic that may wrap.
		"captured.n":   "none",
		"deferArg.n":   "none",
		"goArg.n":      "none",
		"selectSend.n": "none",
		"mapKey.n":     "none",
		"boolRead.ok":  "none",
		"wrapCmp.n":    "none",
		"switchType.n": "none",
		// An unsigned parameter (the stop gives no range above 2^63-1).
		"cmpUnsignedParam.u64": "0.. <k",
		// A comparison of the previous iteration's value: each value read
		// is compared, in the next iteration, with the same constant.
		"loopCarried.n": ".. >5",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: got %q, not expected", k, g)
		}
	}
}

// The range a guard gives a value at a stop: the interval around the
// value that keeps every comparison's outcome, within the bounds.
func TestGuardRange(t *testing.T) {
	const minI, maxI = math.MinInt64, math.MaxInt64
	unbounded := Guard{Lo: minI, Hi: maxI}
	with := func(lo, hi int64, cmps ...GuardCmp) *Guard {
		return &Guard{Lo: lo, Hi: hi, Cmps: cmps}
	}
	params := map[string]int64{"amt": 10, "k": 2}
	param := func(frame int, name string) (int64, bool) {
		k, ok := params[fmt.Sprint(frame, name)]
		return k, ok
	}
	params["0amt"], params["1k"] = 10, 2
	site := &GuardSite{Lo: minI, Hi: maxI, Cmps: []GuardCmp{{Op: token.GEQ, Param: "k"}}}
	tests := []struct {
		name string
		g    *Guard
		v    int64
		site *GuardSite
		want string // "none" or the range
	}{
		{"nothing to keep", &unbounded, 7, nil, "..(unbounded)"},
		{"not below 10", with(minI, maxI, GuardCmp{Op: token.LSS, K: 10}), 110, nil, "10.."},
		{"below 10", with(minI, maxI, GuardCmp{Op: token.LSS, K: 10}), 3, nil, "..9"},
		{"at 10 for <", with(minI, maxI, GuardCmp{Op: token.LSS, K: 10}), 10, nil, "10.."},
		{"at 10 for <=", with(minI, maxI, GuardCmp{Op: token.LEQ, K: 10}), 10, nil, "..10"},
		{"above 10 for >", with(minI, maxI, GuardCmp{Op: token.GTR, K: 10}), 11, nil, "11.."},
		{"at 10 for >", with(minI, maxI, GuardCmp{Op: token.GTR, K: 10}), 10, nil, "..10"},
		{"at 10 for >=", with(minI, maxI, GuardCmp{Op: token.GEQ, K: 10}), 10, nil, "10.."},
		{"below 10 for >=", with(minI, maxI, GuardCmp{Op: token.GEQ, K: 10}), 9, nil, "..9"},
		{"equal", with(minI, maxI, GuardCmp{Op: token.EQL, K: 4}), 4, nil, "4..4"},
		{"not equal, below", with(minI, maxI, GuardCmp{Op: token.NEQ, K: 4}), 1, nil, "..3"},
		{"not equal, above", with(minI, maxI, GuardCmp{Op: token.EQL, K: 4}), 6, nil, "5.."},
		{"array index", with(0, 3, GuardCmp{Op: token.EQL, K: 4}), 1, nil, "0..3"},
		{"out of the bounds", with(0, 3, GuardCmp{Op: token.EQL, K: 4}), 4, nil, "none"},
		{"parameter", with(minI, maxI, GuardCmp{Op: token.LSS, Param: "amt"}), 110, nil, "10.."},
		{"unknown parameter", with(minI, maxI, GuardCmp{Op: token.LSS, Param: "x"}), 110, nil, "none"},
		{"extremes", with(minI, maxI, GuardCmp{Op: token.GTR, K: minI}, GuardCmp{Op: token.LSS, K: maxI}), 0, nil, fmt.Sprintf("%d..%d", minI+1, maxI-1)},
		{"returned, no site", &Guard{Lo: 0, Hi: maxI, Returned: true}, 1, nil, "none"},
		{"returned at a site", &Guard{Lo: 0, Hi: maxI, Returned: true}, 1, site, "0..1"},
		{"returned at a site, above", &Guard{Lo: 0, Hi: maxI, Returned: true}, 5, site, "2.."},
	}
	for _, tt := range tests {
		r, ok := guardRange(tt.g, tt.v, tt.site, param)
		got := "none"
		if ok {
			e := trace.Event{Kind: trace.KindRead, Value: uint64(tt.v), Flags: trace.HasValue}
			if !e.SetRange(r) {
				t.Errorf("%s: SetRange(%+v) refused", tt.name, r)
			}
			got = fmt.Sprintf("%d..%d", r.Lo, r.Hi)
			switch {
			case r.Lo == minI && r.Hi == maxI:
				got = "..(unbounded)"
			case r.Lo == minI:
				got = fmt.Sprintf("..%d", r.Hi)
			case r.Hi == maxI:
				got = fmt.Sprintf("%d..", r.Lo)
			}
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

// The recorded ranges of the guards program's reads, in program order:
// the withdrawal's test (110 is not below 10) and its write-back (any
// value), the log's count as an array index (0..3, and none once the
// buffer is full: the count 4 is replaced by 0, so the index's bounds do
// not hold for it), the queue's length tested by two callers, one with
// the caller's parameter (2), and no range (the length alone) where the
// value is printed; a string's length; a pointer, whose value is the
// address of the account it points to.
func TestRecordGuards(t *testing.T) {
	plan, bin := prepare(t, "guards", true)
	tr, oc := record(t, context.Background(), plan, Options{Binary: bin})
	if !oc.Complete || oc.Status != 0 || oc.Invalid != "" || oc.Unevaluated != 0 {
		t.Fatalf("outcome %+v", oc)
	}
	var got []string
	for _, e := range tr.Events {
		if e.Kind != trace.KindRead {
			continue
		}
		name := tr.Object(e.Obj).Name
		switch name {
		case "a.balance", "l.n", "q.events", "l.name", "h.cur", "h.cur.balance":
		default:
			continue
		}
		s := fmt.Sprintf("%s:%d", name, tr.Site(e.Site).Line)
		switch {
		case e.Flags&trace.ValueIsAddr != 0:
			// The address of what it points to, named by the object
			// there (an Account's first field, its mutex), and its size.
			s += fmt.Sprintf(" v=&%s size=%d", tr.Object(trace.ObjID(e.Value)).Name, e.Arg)
		case e.Flags&trace.HasValue != 0:
			s += fmt.Sprintf(" v=%d", int64(e.Value))
		}
		if r, ok := e.Range(); ok {
			s += " range=" + describeRange(r)
		}
		if e.Flags&trace.ValueIsLen != 0 {
			s += " len"
		}
		got = append(got, s)
	}
	want := []string{
		"a.balance:22 v=110 range=10..",
		"a.balance:26 v=110 range=..",
		"a.balance:32 v=100",
		"l.n:43 v=0 range=0..3",
		"l.n:43 v=1 range=0..3",
		"l.n:43 v=2 range=0..3",
		"l.n:43 v=3 range=0..3",
		"l.n:43 v=4",
		"q.events:61 v=1 range=1.. len",
		"q.events:61 v=1 range=0..1 len",
		"q.events:61 v=1 len",
		"l.name:87 v=5 range=4.. len",
		"h.cur:101 v=&a.mu size=16",
		"a.balance:101 v=100",
	}
	if !slices.Equal(got, want) {
		t.Errorf("reads:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := trace.Validate(tr); err != nil {
		t.Errorf("trace: %v", err)
	}
}

func describeRange(r trace.Range) string {
	s := ".."
	if r.Lo != math.MinInt64 {
		s = fmt.Sprint(r.Lo) + s
	}
	if r.Hi != math.MaxInt64 {
		s += fmt.Sprint(r.Hi)
	}
	return s
}

// TestAddrVaries checks which stores the plan marks as writes whose
// address may vary: an element at an index that is not a constant.
func TestAddrVaries(t *testing.T) {
	src := `package p

type T struct {
	n   int
	buf [4]int
	s   []int
}

func index(t *T, e int)   { n := t.n; t.buf[n] = e }
func constant(t *T, e int) { t.buf[2] = e; t.s[0] = e }
func slice(t *T, e, i int) { t.s[i] = e }
func field(t *T, e int)    { t.n = e }
`
	_, pkg := buildSrc(t, src)
	got := map[string][]bool{}
	for _, name := range []string{"index", "constant", "slice", "field"} {
		for _, b := range pkg.Func(name).Blocks {
			for _, instr := range b.Instrs {
				if s, ok := instr.(*ssa.Store); ok {
					got[name] = append(got[name], addrVaries(s))
				}
			}
		}
	}
	want := map[string][]bool{"index": {true}, "constant": {false, false}, "slice": {true}, "field": {false}}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: stores vary %v, want %v", name, got[name], w)
		}
	}
}

// A probe that stands for the loads of two variants of one package (with
// and without its tests) keeps the call sites of both, and drops one that
// the two see differently; guards that differ otherwise give none.
func TestMergeGuards(t *testing.T) {
	site := func(fn string, line int, k int64) GuardSite {
		return GuardSite{Func: fn, File: "q.go", Line: line, Lo: math.MinInt64, Hi: math.MaxInt64,
			Cmps: []GuardCmp{{Op: token.EQL, K: k}}}
	}
	ret := func(sites ...GuardSite) *Guard {
		return &Guard{Len: true, Lo: 0, Hi: math.MaxInt64, Returned: true, Sites: sites}
	}
	lines := func(g *Guard) string {
		if g == nil {
			return "none"
		}
		var s []string
		for _, st := range g.Sites {
			s = append(s, fmt.Sprintf("%s:%d", st.Func, st.Line))
		}
		return strings.Join(s, " ")
	}
	tests := []struct {
		name string
		x, y *Guard
		want string
	}{
		{"the test variant calls it once more", ret(site("p.wait", 10, 0)), ret(site("p.wait", 10, 0), site("p.TestWait", 5, 0)), "p.TestWait:5 p.wait:10"},
		{"one site seen differently", ret(site("p.wait", 10, 0), site("p.b", 3, 1)), ret(site("p.wait", 10, 1), site("p.b", 3, 1)), "p.b:3"},
		{"no site left", ret(site("p.wait", 10, 0)), ret(site("p.wait", 10, 1)), "none"},
		{"different comparisons", &Guard{Lo: 0, Hi: 3, Cmps: []GuardCmp{{Op: token.EQL, K: 4}}}, &Guard{Lo: 0, Hi: 3}, "none"},
		{"equal", &Guard{Lo: 0, Hi: 3}, &Guard{Lo: 0, Hi: 3}, ""},
	}
	for _, tt := range tests {
		if got := lines(mergeGuards(tt.x, tt.y)); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The instrumenting recorder records the values the Delve recorder does
// (TestRecordGuards) beyond integers and booleans: a slice's or string's
// length, and a pointer's address with the size of what it points to.
func TestInstrumentedValues(t *testing.T) {
	in, bin, root := prepareInstrumented(t, "guards", true)
	tr := recordInstrumentedOK(t, in, Options{Binary: bin, Dir: filepath.Join(root, "testdata/record/guards")})
	var got []string
	var ptr *trace.Event
	for i := range tr.Events {
		e := &tr.Events[i]
		if e.Kind != trace.KindRead {
			continue
		}
		s := fmt.Sprintf("%s:%d", tr.Object(e.Obj).Name, tr.Site(e.Site).Line)
		switch {
		case e.Flags&trace.ValueIsAddr != 0:
			ptr = e
			s += fmt.Sprintf(" addr size=%d", e.Arg)
		case ptr != nil && tr.Site(e.Site).Line == tr.Site(ptr.Site).Line:
			// The read through the pointer, at the account's balance,
			// a mutex after the address the pointer holds.
			s = fmt.Sprintf("balance:%d at v+%d", tr.Site(e.Site).Line, uint64(e.Obj)-ptr.Value)
		case e.Flags&trace.ValueIsLen != 0:
			s += fmt.Sprintf(" len=%d", e.Value)
		default:
			continue
		}
		got = append(got, s)
	}
	want := []string{
		"logs:110 addr size=72",
		"logs:110 addr size=72",
		"logs:110 addr size=72",
		"logs:110 addr size=72",
		"logs:110 addr size=72",
		"q.events:61 len=1",
		"q.events:61 len=1",
		"q.events:61 len=1",
		"label:117 addr size=16",
		"l.name:87 len=5",
		"holder:119 addr size=8",
		"h.cur:101 addr size=16",
		"balance:101 at v+8",
	}
	if !slices.Equal(got, want) {
		t.Errorf("reads:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
