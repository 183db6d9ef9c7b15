package record

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// terminates follows the specification's terminating statements: a
// region's end is not placed after one, where the function must end in
// it (an error of avcheck's that left a file of a public module
// unrecorded: a switch whose every case returns, the last statement of
// a region).
func TestTerminates(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{`return 1`, true},
		{`panic("x")`, true},
		{`x++`, false},
		{`{ x++; return 1 }`, true},
		{`if a { return 1 } else { return 2 }`, true},
		{`if a { return 1 }`, false},
		{`if a { return 1 } else if b { return 2 }`, false},
		{`if a { return 1 } else if b { return 2 } else { panic(0) }`, true},
		{`switch { case a: return 1; default: panic("x") }`, true},
		{`switch { case a: return 1 }`, false},
		{`switch v.(type) { case int: return 1; default: return 2 }`, true},
		{`switch v := v.(type) { case int: if v > 0 { return 1 }; return 2; default: return 2 }`, true},
		{`switch { case a: break; default: return 1 }`, false},
		{`switch { case a: if b { break }; return 1; default: return 1 }`, false},
		{`switch { case a: fallthrough; default: return 1 }`, true},
		{`switch { case a: for { break }; default: return 1 }`, false},
		{`switch { case a: for { if b { break } }; default: return 1 }`, false},
		{`switch { case a: for { switch { case b: break } }; default: return 1 }`, true},
		{`switch { case a: switch { case b: break; default: return 2 }; return 1; default: return 1 }`, true},
		{`for {}`, true},
		{`for { break }`, false},
		{`for { for { break } }`, true},
		{`L: for { for { break L } }`, false},
		{`for a { }`, false},
		{`for range c { return 1 }`, false},
		{`select {}`, true},
		{`select { case <-c: return 1 }`, true},
		{`select { case <-c: break }`, false},
		{`L: switch { case a: for { break L }; default: return 1 }`, false},
		{`go f()`, false},
	} {
		src := "package p\nfunc f() int {\n" + tc.src + "\n}\n"
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		body := f.Decls[0].(*ast.FuncDecl).Body.List
		if got := terminates(body[len(body)-1]); got != tc.want {
			t.Errorf("terminates(%s) = %v, want %v", tc.src, got, tc.want)
		}
	}
}
