package replay

import (
	"fmt"
	"maps"
	"strings"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// Observation is what a replay showed of a finding: whether it saw the
// violation happen, and what it saw or why that does not confirm it.
type Observation struct {
	// Confirmed says the forced run went through the witness to its last
	// access and the violation showed: in the values its accesses saw, or
	// in the test's failure.
	Confirmed bool
	// Text is one line: what was seen ("g5 read c.n = 0, g6 then wrote
	// c.n = 1, and g5 wrote c.n = 1 over it: g6's update is lost"), or
	// why the replay does not confirm the finding.
	Text string
}

// Observe judges replay r of witness w, which FromTrace made from
// finding f of trace t. A finding is confirmed only when the replay
// forced every step of the witness and then either the values its
// accesses saw differ from those of any serial order as the pattern
// says (a triplet's region read a value another goroutine's write had
// made stale, read two different values, read back another goroutine's
// value, or let another goroutine see its intermediate value), or the
// program ended with a failure status although the recorded run did not
// (recordedFailed). A race is confirmed when the goroutines of its two
// accesses stood at them at once, on one variable (Result.Meeting). An
// atomic-set finding is confirmed when its values differ from those of
// both serial orders of its two regions (atomicSet). A race whose
// goroutines the replay did not hold at its accesses leaves the values
// of some serial order: only a failure confirms it.
// Goroutines are named as in the finding's report, by their ids in t.
func Observe(t *trace.Trace, f predict.Finding, w *Witness, r Result, recordedFailed bool) Observation {
	if !r.Enforced {
		return Observation{Text: r.Reason}
	}
	seen := valuesBySeq(w, r)
	var o Observation
	switch {
	case r.Meeting != nil && f.Kind == predict.KindRace && len(f.Accesses) == 2:
		o = met(t, f, r.Meeting)
	case f.Kind == predict.KindAtomicity && len(f.Accesses) == 3:
		o = triplet(t, f, seen)
	case f.Kind == predict.KindAtomicSet && len(f.Accesses) == 4:
		o = atomicSet(t, f, seen)
	default:
		o.Text = fmt.Sprintf("the witness ran to its last access, but the values of %s cannot show a %s %s: they are those of some serial order", f.Var, f.Kind, f.Pattern)
	}
	if r.Failed() && !recordedFailed {
		failed := fmt.Sprintf("the program exited with status %d", r.Status)
		if lines := failureLines(r.Output); lines != "" {
			failed = "the test failed: " + lines
		}
		if o.Confirmed {
			o.Text += "; " + failed
		} else {
			o = Observation{Confirmed: true, Text: "the witness ran to its last access, and " + failed}
		}
	}
	return o
}

// met judges a race whose two goroutines the replay saw stand at its
// accesses at once, on one variable: either could go first, so nothing
// orders them, which is what a race is (Observe).
func met(t *trace.Trace, f predict.Finding, m *Meeting) Observation {
	a, b := f.Accesses[0], f.Accesses[1]
	x := name(t, a)
	value := ""
	if m.Value != "" {
		value = fmt.Sprintf(", where %s held %s", x, m.Value)
	}
	return Observation{true, fmt.Sprintf("g%d and g%d stood at once at their accesses of one %s, neither waiting for the other: g%d about to %s it at %s, g%d about to %s it at %s%s",
		a.G, b.G, x, a.G, verb(a), where(t, a), b.G, verb(b), where(t, b), value)}
}

func verb(a predict.Access) string {
	if a.Op.IsWrite() {
		return "write"
	}
	return "read"
}

// valuesBySeq returns the values the replay saw, by the trace position
// of the witness step that saw each.
func valuesBySeq(w *Witness, r Result) map[uint64]Value {
	m := make(map[uint64]Value, len(r.Values))
	for _, v := range r.Values {
		if v.Step < 0 || v.Step >= len(w.Steps) {
			continue
		}
		if seq := w.Steps[v.Step].Seq; seq != 0 {
			m[seq] = v
		}
	}
	return m
}

// triplet judges an unserializable triplet (first, interleaved, last)
// by the values its three accesses saw: what each of the patterns of
// Table 1 of AVFilter (shared/seeds/000_5650ed431402be49.txt) breaks,
// made visible.
func triplet(t *trace.Trace, f predict.Finding, seen map[uint64]Value) Observation {
	a, b := f.Accesses[0], f.Accesses[1]
	vals, unread := accessValues(t, f.Accesses, seen)
	if unread != nil {
		return *unread
	}
	va, vb, vc := vals[0], vals[1], vals[2]
	ga, gb := fmt.Sprintf("g%d", a.G), fmt.Sprintf("g%d", b.G)
	x := name(t, a)
	switch f.Pattern {
	case "R-W-W":
		if va != vb {
			return Observation{true, fmt.Sprintf("%s read %s = %s, %s then wrote %s = %s, and %s wrote %s = %s over it: %s's update is lost", ga, x, va, gb, x, vb, ga, x, vc, gb)}
		}
		return Observation{Text: fmt.Sprintf("the witness ran to its last access, but %s wrote the value %s had read (%s = %s): no update is lost", gb, ga, x, va)}
	case "R-W-R":
		if va != vc {
			return Observation{true, fmt.Sprintf("%s read %s = %s, %s then wrote %s = %s, and %s read %s = %s: its two reads disagree", ga, x, va, gb, x, vb, ga, x, vc)}
		}
		return Observation{Text: fmt.Sprintf("the witness ran to its last access, but %s read %s = %s both times", ga, x, va)}
	case "W-W-R":
		if va != vc {
			return Observation{true, fmt.Sprintf("%s wrote %s = %s, %s then wrote %s = %s, and %s read %s = %s, not what it wrote", ga, x, va, gb, x, vb, ga, x, vc)}
		}
		return Observation{Text: fmt.Sprintf("the witness ran to its last access, but %s read back the value it wrote (%s = %s)", ga, x, va)}
	case "W-R-W":
		if vb == va && va != vc {
			return Observation{true, fmt.Sprintf("%s wrote %s = %s, %s then read %s = %s, and %s wrote %s = %s: %s saw an intermediate value", ga, x, va, gb, x, vb, ga, x, vc, gb)}
		}
		return Observation{Text: fmt.Sprintf("the witness ran to its last access, but %s read %s = %s, which is not an intermediate value (%s wrote %s, then %s)", gb, x, vb, ga, va, vc)}
	}
	return Observation{Text: fmt.Sprintf("the witness ran to its last access, but the values of %s cannot show a %s: the last write is %s's in a serial order too", x, f.Pattern, ga)}
}

// atomicSet judges an atomic-set finding (the region's first access,
// the other goroutine's two, the region's last, in the order the
// witness ran them) by its four values: it is shown when they differ
// from what each serial order of the two regions would have given, the
// region's before the other's and the other's before the region's. A
// serial order's reads see the last write before them in it, or the
// value the variable had before the four, known where the witness's
// first access of it is a read; its final value of a variable is its
// last write of it. A difference that rests on a value not known does
// not count. Writes are taken to write what they wrote in the replay.
// So Ru(x)-Wu'(x)-Wu'(y)-Wu(y) shows when x changed under the region's
// read (the other's order would have it read the new x) and the
// region's write of y replaced another value (the region's order would
// leave the other's): a write of y made from a stale x.
func atomicSet(t *trace.Trace, f predict.Finding, seen map[uint64]Value) Observation {
	acc := f.Accesses
	vals, unread := accessValues(t, acc, seen)
	if unread != nil {
		return *unread
	}
	// What the variables held before the four: known where the first of
	// them to reach a variable read it.
	before := map[trace.ObjID]string{}
	final := map[trace.ObjID]string{}
	for i, x := range acc {
		if _, ok := before[x.Obj]; !ok && !x.Op.IsWrite() {
			if _, wrote := final[x.Obj]; !wrote {
				before[x.Obj] = vals[i]
			}
		}
		if x.Op.IsWrite() {
			final[x.Obj] = vals[i]
		}
	}
	// differs says whether the serial order runs the accesses in order
	// would have given a read another value, or left a variable another
	// final value, than the witness did, on values known.
	differs := func(order []int) bool {
		cur := maps.Clone(before)
		last := map[trace.ObjID]string{}
		for _, i := range order {
			x := acc[i]
			if x.Op.IsWrite() {
				cur[x.Obj], last[x.Obj] = vals[i], vals[i]
				continue
			}
			if v, ok := cur[x.Obj]; ok && v != vals[i] {
				return true
			}
		}
		for obj, v := range final {
			if last[obj] != v {
				return true
			}
		}
		return false
	}
	region, other := acc[0].G, acc[1].G
	switch {
	case !differs([]int{0, 3, 1, 2}):
		return Observation{Text: fmt.Sprintf("the witness ran to its last access, but its values are those of g%d's region run before g%d's", region, other)}
	case !differs([]int{1, 2, 0, 3}):
		return Observation{Text: fmt.Sprintf("the witness ran to its last access, but its values are those of g%d's region run after g%d's", region, other)}
	}
	var seenText []string
	for i, x := range acc {
		op := "read"
		if x.Op.IsWrite() {
			op = "wrote"
		}
		seenText = append(seenText, fmt.Sprintf("g%d %s %s = %s", x.G, op, name(t, x), vals[i]))
	}
	return Observation{true, strings.Join(seenText, ", then ") + fmt.Sprintf(": neither g%d's region run before g%d's nor after it gives these values", region, other)}
}

// accessValues returns the values the replay saw at a finding's
// accesses, or, if it could not read one, the observation that says so.
func accessValues(t *trace.Trace, acc []predict.Access, seen map[uint64]Value) ([]string, *Observation) {
	vals := make([]string, len(acc))
	for i, x := range acc {
		v, ok := seen[x.Seq]
		if !ok {
			return nil, &Observation{Text: fmt.Sprintf("the witness ran to its last access, but the replay could not read the value of %s at %s (only integers, booleans, pointers, slices and strings are read)", name(t, x), where(t, x))}
		}
		vals[i] = v.Value
	}
	return vals, nil
}

func name(t *trace.Trace, a predict.Access) string {
	return t.Object(a.Obj).Name
}

func where(t *trace.Trace, a predict.Access) string {
	s := t.Site(a.Site)
	return fmt.Sprintf("%s:%d", shortFile(s.File), s.Line)
}

// failureLines picks from a test binary's output the lines that say why
// it failed: the tests' own messages under their "--- FAIL" lines, or a
// panic's first line; at most three, joined.
func failureLines(out string) string {
	var picked []string
	inFail := false
	for line := range strings.SplitSeq(out, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "--- FAIL"):
			inFail = true
			continue
		case strings.HasPrefix(trimmed, "panic: ") || strings.HasPrefix(trimmed, "fatal error: "):
			picked = append(picked, trimmed)
		case inFail && strings.HasPrefix(line, "    ") && trimmed != "":
			picked = append(picked, trimmed)
		default:
			inFail = false
		}
		if len(picked) == 3 {
			break
		}
	}
	return strings.Join(picked, "; ")
}
