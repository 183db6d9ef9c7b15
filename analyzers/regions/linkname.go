package regions

import (
	"go/ast"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// linknames maps the functions of a package that a //go:linkname
// directive names, by name, to the other package's function it links
// them to ("internal/runtime/atomic.LoadAcquintptr"), or to "" when the
// directive gives only the name (//go:linkname poolCleanup: another
// package refers to this function by its name).
func linknames(files []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				fields := strings.Fields(c.Text)
				if len(fields) >= 2 && len(fields) <= 3 && fields[0] == "//go:linkname" {
					out[fields[1]] = strings.Join(fields[2:], "")
				}
			}
		}
	}
	return out
}

// linkedFrom reports whether fn, a function with a body, is one that a
// //go:linkname directive names: another package (in practice the
// runtime) calls it by name, from a context its own package does not
// show (sync.Pool's cleanup runs with the world stopped).
func (ps *passState) linkedFrom(fn *ssa.Function) bool {
	if len(fn.Blocks) == 0 || fn.Parent() != nil || fn.Signature.Recv() != nil {
		return false
	}
	_, ok := ps.linked[fn.Name()]
	return ok
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
	target := ps.linked[callee.Name()]
	if target == "" {
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
