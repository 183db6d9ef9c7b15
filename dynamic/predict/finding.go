// Package predict holds avcheck's predictors: pure functions from a trace
// (dynamic/trace) to the atomicity violations that the recorded run, or
// another interleaving of it, exhibits.
package predict

import (
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/intent"
)

// Level says how much evidence stands behind a finding. Each stage of the
// pipeline raises it; a higher level implies every lower one.
type Level uint8

// The levels, from least to most evidence.
const (
	LevelPredicted Level = iota + 1 // an engine predicts it from the trace
	LevelFiltered                   // it survives AVFilter's read-after-write check
	LevelProven                     // a solver found a feasible interleaving
	LevelReplayed                   // a replay of the witness exhibited it
)

var levelNames = [...]string{"", "predicted", "filtered", "proven", "replayed"}

// String returns the level's name as it appears in reports and JSON.
func (l Level) String() string {
	if int(l) < len(levelNames) && l != 0 {
		return levelNames[l]
	}
	return "unknown"
}

// FindingKind is the kind of anomaly a finding describes.
type FindingKind string

// The kinds of finding.
const (
	KindRace           FindingKind = "race"           // two conflicting accesses can be adjacent
	KindAtomicity      FindingKind = "atomicity"      // an unserializable triplet on one variable
	KindAtomicSet      FindingKind = "atomic-set"     // an unserializable interleaving over two variables of one region
	KindUnserializable FindingKind = "unserializable" // observed mode: the recorded run itself is not conflict-serializable
)

// Access is one event of a finding, with the part it plays.
type Access struct {
	Seq  uint64       // the event's position in the trace
	G    trace.GoID   // its goroutine
	Op   trace.Kind   // read, write, or an atomic variant
	Obj  trace.ObjID  // the variable
	Site trace.SiteID // its source position
	Role string       // "first", "interleaved", "last" (a triplet), or "access" (a race)
}

// Finding is one predicted violation.
type Finding struct {
	Kind     FindingKind
	Pattern  string // "R-W-R", ..., "W-W-W"; for atomic-set, the access pattern over x and y; for races "W-R" etc.
	Level    Level
	Var      string // the variable's name, from the trace's object table
	Accesses []Access
	// Witness is a schedule prefix that realises the finding, as event
	// positions in the order they run; nil if none could be built.
	Witness []uint64
	// Count is how many instances were merged into this finding by
	// deduplication on the combination of source sites. The pattern
	// search stops counting a pair of groups at 1000 instances, so for
	// frequent patterns it is a lower bound.
	Count int
	// WitnessFrom is where Witness departs from the recorded order: the
	// schedule runs the trace's events with Seq below WitnessFrom as
	// recorded, then Witness.
	WitnessFrom uint64
	// Intent is why the finding's region is meant to be atomic, as the
	// trace states it; zero (intent.Unstated) for a race, and for a trace
	// that does not say.
	Intent Intent
	// Dropped says why a finding is shown only on request (avcheck
	// predict -all): the filter that removed it or why no witness could be
	// built. It is empty for a reported finding.
	Dropped string
	// Note says what a reported finding's level leaves out: that the
	// precise stage did not check it, its time (Options.StageTime)
	// having run out. Empty otherwise.
	Note string
	// Replay says what a replay of the witness under the debugger showed
	// (dynamic/replay): for a finding at LevelReplayed, what was seen;
	// for one the replay did not confirm, why, starting "not confirmed:
	// ". Empty when no replay ran.
	Replay string
}

// Intent is the evidence that a region is meant to be atomic, as its
// begin event states it (trace.Event.Intent), with the sites of the two
// accesses it links (0 where it links none).
type Intent struct {
	Evidence intent.Evidence
	From, To trace.SiteID
}

// rules says why a violation of a region with this intent, whose first
// access is of kind first, does not break what the region means; "" if
// it does. A region without evidence means nothing. One whose evidence
// follows a value read (written back, deciding an access, read with
// another) means that value to stay valid until the region uses it: a
// violation that begins with the region's own write (another goroutine
// seeing an intermediate value, or writing between the region's write
// and its read) breaks nothing it shows.
func (in Intent) rules(first trace.Kind) string {
	switch in.Evidence {
	case intent.None:
		return "its region has no evidence that it is meant to be atomic (proposed by code proximity only: no value read in it flows into a later access of it)"
	case intent.WriteBack, intent.Branch, intent.ReadPair:
		if first.IsWrite() {
			return "its region is meant to be atomic for a value it reads (" + in.Evidence.String() + "), and the violation begins with its own write, which breaks nothing that evidence shows"
		}
	}
	return ""
}
