package guardedby

import (
	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/ssa"
)

// A goroutine often owns some of its object's state (regions.Owners): a
// connection's read loop writes a field under the lock, for the other
// goroutines that read it under the lock, and reads it itself without
// the lock.

// ownRead reports whether a, a read, and every write of its field run in
// the one goroutine that owns them: the read races with none of them.
func ownRead(a access, accs []access, owner map[*ssa.Function]*ssa.Function) bool {
	g := owner[a.fn]
	if a.a.Kind != regions.Read || g == nil {
		return false
	}
	for _, w := range accs {
		if w.a.Kind == regions.Write && owner[w.fn] != g {
			return false
		}
	}
	return true
}
