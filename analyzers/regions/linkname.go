package regions

import (
	"go/ast"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// linknames maps the functions of a package that a //go:linkname
// directive links to another package's function, by name, to that
// function ("internal/runtime/atomic.LoadAcquintptr").
func linknames(files []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				fields := strings.Fields(c.Text)
				if len(fields) == 3 && fields[0] == "//go:linkname" {
					out[fields[1]] = fields[2]
				}
			}
		}
	}
	return out
}

// linkedAtomic returns the sync/atomic operation that a call performs
// when its callee is a function of this package without a body that is
// linked to an atomic operation: to sync/atomic, or to the runtime's own
// atomics, whose loads with acquire and stores with release
// (LoadAcquintptr, StoreReluintptr) are what sync/atomic's are too.
func (ps *passState) linkedAtomic(c *ssa.CallCommon) string {
	callee := c.StaticCallee()
	if callee == nil || len(callee.Blocks) != 0 || callee.Parent() != nil || callee.Signature.Recv() != nil ||
		callee.Pkg == nil || callee.Pkg.Pkg != ps.pass.Pkg {
		return ""
	}
	target, ok := ps.linked[callee.Name()]
	if !ok {
		return ""
	}
	pkg, name := splitGlobal(target)
	switch pkg {
	case "sync/atomic", "internal/runtime/atomic", "runtime/internal/atomic":
	default:
		return ""
	}
	for _, p := range []struct{ prefix, op string }{
		{"CompareAndSwap", "CompareAndSwap"}, {"Cas", "CompareAndSwap"},
		{"Load", "Load"}, {"Store", "Store"},
		{"Add", "Add"}, {"Xadd", "Add"},
		{"Swap", "Swap"}, {"Xchg", "Swap"},
		{"And", "And"}, {"Or", "Or"},
	} {
		if strings.HasPrefix(name, p.prefix) {
			return p.op
		}
	}
	return ""
}
