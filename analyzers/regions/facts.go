package regions

import (
	"fmt"
	"strings"
)

// Summary is a function's Fact: what it reads and writes of the state its
// callers can see (package-level variables, and state reached from its
// parameters), under which locks, and which results carry values read
// from that state. Callers map its paths onto their arguments.
type Summary struct {
	Accesses []SummaryAccess
	// Results[i] lists the indices in Accesses of the reads whose values
	// flow into result i.
	Results [][]int
	// Locks are the locks it acquires, whether or not it releases them.
	Locks []Path
	// Acquires are the locks it returns holding that it was not called
	// with (a lock helper); Releases the ones it releases without having
	// acquired them (an unlock helper).
	Acquires []Path
	Releases []Path
	// Callbacks are the parameters of function type that it only calls,
	// before it returns, in its own goroutine (a ForEach's callback): a
	// closure passed there runs with the caller's locks held.
	Callbacks []int
	// Escapes are the parameters whose values it lets another goroutine
	// reach, and Fresh the results that are new objects of its own, not
	// shared with any other goroutine (escape.go).
	Escapes []int
	Fresh   []int
}

// SummaryAccess is one access of a Summary.
type SummaryAccess struct {
	Path   Path
	Kind   AccessKind
	Atomic string
	Sync   bool
	// Locks are the locks held at the access. The function acquires them
	// itself, so each call is its own critical section.
	Locks     []SummaryLock
	Rechecked bool
	Refreshed bool
	Claimed   bool
	Decides   bool
	// Params lists, for a write, the parameters whose values flow into
	// the written value.
	Params []int
}

// SummaryLock is a lock held at a SummaryAccess.
type SummaryLock struct {
	Lock Path
	Read bool
}

// AFact marks Summary as an analysis Fact.
func (*Summary) AFact() {}

// String describes the summary for tests ("// want fn:`...`") and
// debugging, deterministically.
func (s *Summary) String() string {
	var parts []string
	for i, a := range s.Accesses {
		var b strings.Builder
		b.WriteString(a.Kind.String())
		b.WriteByte(' ')
		b.WriteString(a.Path.String())
		if a.Atomic != "" {
			fmt.Fprintf(&b, " atomic.%s", a.Atomic)
		}
		for _, l := range a.Locks {
			mode := "lock"
			if l.Read {
				mode = "rlock"
			}
			fmt.Fprintf(&b, " [%s %s]", mode, l.Lock)
		}
		for r, reads := range s.Results {
			for _, ri := range reads {
				if ri == i {
					fmt.Fprintf(&b, " ->result%d", r)
				}
			}
		}
		if len(a.Params) > 0 {
			fmt.Fprintf(&b, " <-params%v", a.Params)
		}
		parts = append(parts, b.String())
	}
	for _, l := range s.Locks {
		parts = append(parts, "takes "+l.String())
	}
	for _, i := range s.Callbacks {
		parts = append(parts, fmt.Sprintf("calls param%d", i))
	}
	for _, l := range s.Acquires {
		parts = append(parts, "acquires "+l.String())
	}
	for _, l := range s.Releases {
		parts = append(parts, "releases "+l.String())
	}
	return "summary(" + strings.Join(parts, "; ") + ")"
}
