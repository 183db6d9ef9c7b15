package regions

import (
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// op is what a call means to avcheck.
type op uint8

const (
	opOther op = iota
	opLock
	opRLock
	opUnlock
	opRUnlock
	opTryLock
	opTryRLock
	opAtomic   // a sync/atomic operation; see atomicName
	opWGWait   // WaitGroup.Wait
	opWGGo     // WaitGroup.Go starts a goroutine
	opCondWait // Cond.Wait
	opOnceDo   // Once.Do
	opClose    // close(ch)
	opDelete   // delete(m, k)
	opLen      // len or cap
	opCopy     // copy(dst, src)
)

// funcObject returns the declared function of fn, looking through
// instantiation of generic functions.
func funcObject(fn *ssa.Function) *types.Func {
	if o := fn.Origin(); o != nil {
		fn = o
	}
	obj, _ := fn.Object().(*types.Func)
	return obj
}

// classify says what a call does, and for atomics which operation.
func classify(c *ssa.CallCommon) (op, string) {
	if b, ok := c.Value.(*ssa.Builtin); ok {
		switch b.Name() {
		case "close":
			return opClose, ""
		case "delete":
			return opDelete, ""
		case "len", "cap":
			return opLen, ""
		case "copy":
			return opCopy, ""
		}
		return opOther, ""
	}
	fn := c.StaticCallee()
	if fn == nil {
		return opOther, ""
	}
	obj := funcObject(fn)
	if obj == nil || obj.Pkg() == nil {
		return opOther, ""
	}
	recv := ""
	if sig, ok := obj.Type().(*types.Signature); ok && sig.Recv() != nil {
		if n, ok := types.Unalias(deref(sig.Recv().Type())).(*types.Named); ok {
			recv = n.Obj().Name()
		}
	}
	name := obj.Name()
	switch obj.Pkg().Path() {
	case "sync", "internal/sync": // sync.Mutex wraps internal/sync's
		switch recv + "." + name {
		case "Mutex.Lock", "RWMutex.Lock":
			return opLock, ""
		case "RWMutex.RLock":
			return opRLock, ""
		case "Mutex.Unlock", "RWMutex.Unlock":
			return opUnlock, ""
		case "RWMutex.RUnlock":
			return opRUnlock, ""
		case "Mutex.TryLock", "RWMutex.TryLock":
			return opTryLock, ""
		case "RWMutex.TryRLock":
			return opTryRLock, ""
		case "WaitGroup.Wait":
			return opWGWait, ""
		case "WaitGroup.Go":
			return opWGGo, ""
		case "Cond.Wait":
			return opCondWait, ""
		case "Once.Do":
			return opOnceDo, ""
		}
	case "sync/atomic":
		for _, a := range []string{"CompareAndSwap", "Load", "Store", "Add", "Swap", "And", "Or"} {
			if strings.HasPrefix(name, a) {
				return opAtomic, a
			}
		}
	}
	return opOther, ""
}

// syncOpName names the operations that order goroutines, BEST's region
// boundaries; "" for any other op.
func syncOpName(o op) string {
	switch o {
	case opWGWait:
		return "WaitGroup.Wait"
	case opWGGo:
		return "WaitGroup.Go"
	case opCondWait:
		return "Cond.Wait"
	case opOnceDo:
		return "Once.Do"
	case opClose:
		return "channel close"
	}
	return ""
}

// FlipCmp returns the comparison with its operands swapped (k < n is
// n > k).
func FlipCmp(op token.Token) token.Token {
	switch op {
	case token.LSS:
		return token.GTR
	case token.GTR:
		return token.LSS
	case token.LEQ:
		return token.GEQ
	case token.GEQ:
		return token.LEQ
	}
	return op
}

// NegateCmp returns the comparison that holds when op does not.
func NegateCmp(op token.Token) token.Token {
	switch op {
	case token.EQL:
		return token.NEQ
	case token.NEQ:
		return token.EQL
	case token.LSS:
		return token.GEQ
	case token.GEQ:
		return token.LSS
	case token.GTR:
		return token.LEQ
	case token.LEQ:
		return token.GTR
	}
	return op
}
