package regions

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Builder reports whether f is a method that sets its receiver up and
// returns it, to be chained (NewBuffer(n).SetBlocking(true)), and takes
// no lock: by that convention it is called before the value is shared,
// as a constructor is, and its writes are configuration that no lock
// guards.
func Builder(f *Func) bool {
	fn := f.Fn
	sig := fn.Signature
	if sig.Recv() == nil || sig.Results().Len() != 1 || len(fn.Params) == 0 || fn.Blocks == nil {
		return false
	}
	if _, ok := sig.Recv().Type().(*types.Pointer); !ok || !types.Identical(sig.Results().At(0).Type(), sig.Recv().Type()) {
		return false
	}
	returns := 0
	for _, b := range fn.Blocks {
		if len(b.Instrs) == 0 {
			continue
		}
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			if len(ret.Results) != 1 || ret.Results[0] != fn.Params[0] {
				return false
			}
			returns++
		}
	}
	return returns > 0 && len(f.SyncOps) == 0 && HoldsNoLock(f)
}

// HoldsNoLock reports whether f holds no lock at any of its accesses and
// calls: it takes none, as builder and start methods do not.
func HoldsNoLock(f *Func) bool {
	for _, a := range f.Accesses {
		if len(a.Held) > 0 {
			return false
		}
	}
	for _, c := range f.Calls {
		if len(c.Held) > 0 {
			return false
		}
	}
	return true
}
