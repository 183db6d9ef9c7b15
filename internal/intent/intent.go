// Package intent names the evidence that a stretch of code is meant to
// run as one indivisible step. analyzers/regions decides which regions
// have it (Func.Evidence, the one rule both halves of avcheck use); the
// recorder writes it into the trace with each region (trace.Event.Intent);
// the predictors and reports read it back from there.
package intent

import "fmt"

// Evidence says why a region is meant to be atomic. Proximity (BEST,
// shared/seeds/002_42168b820bf119f6.txt, section V) only proposes a
// region; evidence confirms it. A violation of a region with None is
// shown at most at level predicted.
type Evidence uint8

// The kinds of evidence, in the order Func.Evidence prefers them.
const (
	// Unstated: the trace does not say (a trace written before avcheck
	// recorded intent, or by another tool, whose regions are declared by
	// hand): the region is taken as intended, as its producer states it.
	Unstated Evidence = iota
	// None: proposed by proximity alone; nothing shows it is meant to be
	// one step.
	None
	// Annotation: //avcheck:atomic says so.
	Annotation
	// CriticalSection: it is one critical section of a lock.
	CriticalSection
	// WriteBack: a value read in it is written back later in it
	// (read-modify-write).
	WriteBack
	// Branch: a value read in it decides whether a later access of it
	// runs (check-then-act).
	Branch
	// ReadPair: two values read in it are used together (a pair read in
	// two steps).
	ReadPair
	// ReadBack: a value it updates from itself (c.n--) is read back
	// later in it, and what is read decides or makes something (the
	// check after a decrement).
	ReadBack
	numEvidence
)

var names = [numEvidence]string{"unstated", "none", "annotation", "critical-section", "write-back", "branch", "read-pair", "read-back"}

// String returns the evidence's name, as JSON, SARIF and the text trace
// format write it.
func (e Evidence) String() string {
	if e < numEvidence {
		return names[e]
	}
	return fmt.Sprintf("Evidence(%d)", uint8(e))
}

// Parse returns the evidence with the given name.
func Parse(s string) (Evidence, bool) {
	for e := Unstated; e < numEvidence; e++ {
		if names[e] == s {
			return e, true
		}
	}
	return Unstated, false
}

// Valid reports whether e is one of the kinds above.
func (e Evidence) Valid() bool { return e < numEvidence }

// Confirms reports whether e makes a region intended: every kind but
// None.
func (e Evidence) Confirms() bool { return e != None }

// Describe says in words what the evidence is, with from and to the
// positions of the two accesses it links (for WriteBack, Branch, ReadPair
// and ReadBack; "" where unknown) and lock the lock of a CriticalSection.
func Describe(e Evidence, from, to, lock string) string {
	at := func(p string) string {
		if p == "" {
			return "in the region"
		}
		return "at " + p
	}
	switch e {
	case None:
		return "none: the region is proposed by code proximity only, and no value read in it flows into a later access of it"
	case Annotation:
		return "annotated //avcheck:atomic"
	case CriticalSection:
		if lock != "" {
			return "one critical section of " + lock
		}
		return "one critical section"
	case WriteBack:
		return fmt.Sprintf("the value read %s is written back %s", at(from), at(to))
	case Branch:
		return fmt.Sprintf("the value read %s decides whether the access %s runs", at(from), at(to))
	case ReadPair:
		return fmt.Sprintf("the values read %s and %s are used together", at(from), at(to))
	case ReadBack:
		return fmt.Sprintf("the value updated %s is read back %s, and what is read is used", at(from), at(to))
	case Unstated:
		return "stated by the trace's region"
	}
	return e.String()
}
