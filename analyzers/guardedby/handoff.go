package guardedby

import (
	"go/types"

	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/ssa"
)

// A goroutine can hand a value to another over a channel instead of
// sharing it under a lock: it writes a field, then sends on a channel or
// closes it, and the goroutine that receives from the channel reads the
// field without the lock (the Go memory model orders a send or close
// before the receive it completes). guardedby follows this within a
// package: an access without the guard is not reported when its function
// receives from a channel field that some function of the package sends
// on or closes after writing the accessed field. Which of the function's
// accesses the receive orders is not worked out: the function takes part
// in the hand-off, and its accesses of the field are taken as ordered.

// handoffs returns, for each field that a function of the package writes
// and later, in the same call, signals on a channel field (a send or a
// close), the channel fields it signals on.
func handoffs(res *regions.Result) map[*types.Var]map[*types.Var]bool {
	out := map[*types.Var]map[*types.Var]bool{}
	for _, f := range res.Funcs {
		var signals []chanOp
		for _, op := range chanOps(f) {
			if !op.recv {
				signals = append(signals, op)
			}
		}
		if len(signals) == 0 {
			continue
		}
		for _, w := range f.Accesses {
			if w.Kind != regions.Write || w.Var == nil || w.Via != "" || w.Sync {
				continue
			}
			for _, s := range signals {
				if regions.Reaches(w.Instr, s.instr) {
					if out[w.Var] == nil {
						out[w.Var] = map[*types.Var]bool{}
					}
					out[w.Var][s.ch] = true
				}
			}
		}
	}
	return out
}

// receives returns the channel fields f receives from.
func receives(f *regions.Func) map[*types.Var]bool {
	var out map[*types.Var]bool
	for _, op := range chanOps(f) {
		if op.recv {
			if out == nil {
				out = map[*types.Var]bool{}
			}
			out[op.ch] = true
		}
	}
	return out
}

// handedOff reports whether a function that receives from the channels
// recv takes part in a hand-off through one of the channels signalled
// after the field is written.
func handedOff(signalled, recv map[*types.Var]bool) bool {
	for ch := range recv {
		if signalled[ch] {
			return true
		}
	}
	return false
}

// chanOp is an operation of a function on a channel loaded from a field.
type chanOp struct {
	ch    *types.Var // the channel field
	recv  bool       // a receive; otherwise a send or a close
	instr ssa.Instruction
}

// chanOps returns f's own operations on channels it loads from fields:
// receives (<-ch, range, a select's receive case), sends and closes.
func chanOps(f *regions.Func) []chanOp {
	var out []chanOp
	for _, a := range f.Accesses {
		if !a.Sync || a.Kind != regions.Read || a.Var == nil || a.Via != "" {
			continue
		}
		if _, ok := a.Var.Type().Underlying().(*types.Chan); !ok {
			continue
		}
		v, ok := a.Instr.(ssa.Value)
		if !ok || v.Referrers() == nil {
			continue
		}
		for _, ref := range *v.Referrers() {
			switch ref := ref.(type) {
			case *ssa.UnOp: // <-ch, and range over ch
				out = append(out, chanOp{a.Var, true, ref})
			case *ssa.Send:
				out = append(out, chanOp{a.Var, false, ref})
			case *ssa.Select:
				for _, st := range ref.States {
					if st.Chan == v {
						out = append(out, chanOp{a.Var, st.Dir == types.RecvOnly, ref})
					}
				}
			case *ssa.Call:
				if b, ok := ref.Call.Value.(*ssa.Builtin); ok && b.Name() == "close" {
					out = append(out, chanOp{a.Var, false, ref})
				}
			}
		}
	}
	return out
}
