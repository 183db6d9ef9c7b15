package record

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/packages"
)

// Writes made once a call returned.
//
// Both recorders record a line's accesses before the line runs, which is
// when they happen for most of them. Not for the left operands of an
// assignment whose right side calls a function or receives from a
// channel: "res, err = pool.Acquire(ctx)" writes res and err once
// Acquire returned, after whatever synchronisation it made, and "v = <-ch"
// writes v after the receive. Recorded before, the write would seem to
// precede that synchronisation, and a write that the acquire or the
// receive orders after another goroutine's access would seem unordered
// with it: a race that no run can have. So such a write is marked
// (AccessProbe.AfterCall) and recorded after the statement: the
// instrumenting recorder probes it after the statement, and the Delve
// recorder evaluates its address at the line but emits it at the
// goroutine's next stop in the same frame or in a caller (record.go,
// flushAfter).
//
// Only a statement of a statement list counts, not the initialisation of
// an if, for or switch, and only a left operand whose address the
// statement cannot move: one that goes through no variable the same
// statement assigns.

// markAfterCalls sets AfterCall on the plain writes of the plan that are
// left operands of such assignments.
func (plan *Plan) markAfterCalls(pkgs []*packages.Package) {
	type spot struct {
		file      string
		line, col int
	}
	after := make(map[spot]bool)
	for _, p := range pkgs {
		if p.TypesInfo == nil {
			continue
		}
		for i, f := range p.Syntax {
			if i >= len(p.CompiledGoFiles) {
				break
			}
			name := p.CompiledGoFiles[i]
			ast.Inspect(f, func(n ast.Node) bool {
				var list []ast.Stmt
				switch n := n.(type) {
				case *ast.BlockStmt:
					list = n.List
				case *ast.CaseClause:
					list = n.Body
				case *ast.CommClause:
					list = n.Body
				default:
					return true
				}
				for _, st := range list {
					as, ok := st.(*ast.AssignStmt)
					if !ok || !callsOrReceives(p.TypesInfo, as.Rhs) {
						continue
					}
					for _, l := range writtenAfterCall(p.TypesInfo, as) {
						pos := p.Fset.Position(l.Pos())
						after[spot{name, pos.Line, pos.Column}] = true
					}
				}
				return true
			})
		}
	}
	for l, ps := range plan.Accesses {
		for i, p := range ps {
			if p.Write && p.Atomic == "" && p.Map == "" && !p.Contents && after[spot{l.File, l.Line, p.Col}] {
				ps[i].AfterCall = true
			}
		}
	}
}

// callsOrReceives reports whether the expressions call a function (not
// a conversion or a built-in) or receive from a channel, outside the
// function literals they hold.
func callsOrReceives(info *types.Info, exprs []ast.Expr) bool {
	found := false
	for _, e := range exprs {
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.UnaryExpr:
				found = found || n.Op == token.ARROW
			case *ast.CallExpr:
				if tv, ok := info.Types[n.Fun]; ok && !tv.IsType() && !tv.IsBuiltin() {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// writtenAfterCall returns the left operands of as whose address does not
// go through a variable that as assigns (other than the operand itself,
// whose address stays).
func writtenAfterCall(info *types.Info, as *ast.AssignStmt) []ast.Expr {
	assigned := make(map[types.Object]bool)
	for _, l := range as.Lhs {
		if id, ok := ast.Unparen(l).(*ast.Ident); ok {
			if obj := info.ObjectOf(id); obj != nil {
				assigned[obj] = true
			}
		}
	}
	var out []ast.Expr
	for _, l := range as.Lhs {
		if _, ok := ast.Unparen(l).(*ast.Ident); ok {
			out = append(out, l)
			continue
		}
		through := false
		ast.Inspect(l, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && assigned[info.ObjectOf(id)] {
				through = true
			}
			return !through
		})
		if !through {
			out = append(out, l)
		}
	}
	return out
}
