package record

import (
	"slices"
	"testing"
)

// The runtime names are those the compiler gave these functions in a
// program built with -gcflags=all=-N -l (runtime.FuncForPC(pc).Name()).
func TestRuntimeFuncName(t *testing.T) {
	for ssa, want := range map[string]string{
		"":                             "",
		"example.com/cn.main":          "example.com/cn.main",
		"example.com/cn.main$1":        "example.com/cn.main.func1",
		"example.com/cn.main$2$1":      "example.com/cn.main.func2.1",
		"(*example.com/cn.T).M":        "example.com/cn.(*T).M",
		"(*example.com/cn.T).M$1":      "example.com/cn.(*T).M.func1",
		"(*example.com/cn.T).M$1$1":    "example.com/cn.(*T).M.func1.1",
		"(example.com/cn.T).V$3":       "example.com/cn.T.V.func3",
		"(*example.com/cn.T).M$bound":  "",
		"(*example.com/cn.G[int]).M$1": "",
	} {
		got, ok := runtimeFuncName(ssa)
		if ok != (want != "") || got != want {
			t.Errorf("runtimeFuncName(%q) = %q, %v, want %q", ssa, got, ok, want)
		}
	}
}

// Function literals on one line: each goroutine makes only the accesses
// of its own function; a probe whose function's name cannot be mapped is
// kept.
func TestOfFunc(t *testing.T) {
	a := AccessProbe{Expr: "got[0]", Write: true, Col: 12, Func: "p.TestX$1"}
	b := AccessProbe{Expr: "got[1]", Write: true, Col: 40, Func: "p.TestX$2"}
	c := AccessProbe{Expr: "wg", Col: 60, Func: "p.TestX"}
	g := AccessProbe{Expr: "x", Col: 70, Func: "p.G[int]$1"}
	line := []AccessProbe{a, b, c, g}
	for _, tc := range []struct {
		fn   string
		want []AccessProbe
	}{
		{"p.TestX.func1", []AccessProbe{a, g}},
		{"p.TestX.func2", []AccessProbe{b, g}},
		{"p.TestX", []AccessProbe{c, g}},
		{"p.TestX-range1", []AccessProbe{g}},
	} {
		if got := ofFunc(line, tc.fn); !slices.Equal(got, tc.want) {
			t.Errorf("ofFunc(_, %q) = %v, want %v", tc.fn, got, tc.want)
		}
	}
	// A main package's functions are "main.F" in the binary.
	inc := AccessProbe{Expr: "c.n", Func: "(*example.com/loop.counter).inc"}
	lit := AccessProbe{Expr: "c", Func: "example.com/loop.main$1"}
	for fn, want := range map[string][]AccessProbe{
		"main.(*counter).inc": {inc},
		"main.main.func1":     {lit},
		"main.main":           nil,
	} {
		if got := ofFunc([]AccessProbe{inc, lit}, fn); !slices.Equal(got, want) {
			t.Errorf("ofFunc(_, %q) = %v, want %v", fn, got, want)
		}
	}
	// A package whose path's last element has a dot: the binary escapes
	// it ("foo%2ebar").
	m := AccessProbe{Expr: "t.n", Func: "(*example.com/m/foo.bar.T).M"}
	mlit := AccessProbe{Expr: "t", Func: "(*example.com/m/foo.bar.T).M$1"}
	for fn, want := range map[string][]AccessProbe{
		"example.com/m/foo%2ebar.(*T).M":       {m},
		"example.com/m/foo%2ebar.(*T).M.func1": {mlit},
		"example.com/m/foo%2ebar.F":            nil,
	} {
		if got := ofFunc([]AccessProbe{m, mlit}, fn); !slices.Equal(got, want) {
			t.Errorf("ofFunc(_, %q) = %v, want %v", fn, got, want)
		}
	}
	if got := ofFunc([]AccessProbe{c, g}, "p.TestX"); len(got) != 2 {
		t.Errorf("all probes kept: %v", got)
	}
}
