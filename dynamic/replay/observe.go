package replay

import (
	"fmt"
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
// atomic-set finding's values are those of some serial order, and so
// are those of a race whose goroutines the replay did not hold at its
// accesses: only a failure confirms them.
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
	a, b, c := f.Accesses[0], f.Accesses[1], f.Accesses[2]
	for _, x := range []predict.Access{a, b, c} {
		if _, ok := seen[x.Seq]; !ok {
			return Observation{Text: fmt.Sprintf("the witness ran to its last access, but the replay could not read the value of %s at %s (only integers, booleans, pointers, slices and strings are read)", name(t, x), where(t, x))}
		}
	}
	va, vb, vc := seen[a.Seq].Value, seen[b.Seq].Value, seen[c.Seq].Value
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
