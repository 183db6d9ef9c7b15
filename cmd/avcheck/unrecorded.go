package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/avcheck/avcheck/analyzers/regions"
	"github.com/avcheck/avcheck/dynamic/record"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// printUnrecorded says, after the recording's own line, what the run
// did not record: in one line, how many accesses of the packages under
// test, in the functions the run entered, were not recorded and why,
// listed by site with verbose; and, before it, when no access of those
// packages was recorded at all, why. unrewritten says that files of the
// packages under test were not instrumented (said above it), which is
// then the likelier why no probe ran.
func printUnrecorded(w io.Writer, plan *record.Plan, t *trace.Trace, oc record.Outcome, verbose, unrewritten bool, dir string) {
	accesses := 0
	for i := range t.Events {
		if t.Events[i].Kind.IsAccess() {
			accesses++
		}
	}
	if accesses == 0 {
		var why string
		switch {
		case len(plan.Accesses) == 0:
			why = "they make no access of shared state (package-level variables, fields and elements reached through pointers) that the recorder probes"
		case oc.ProbeHits == 0:
			why = fmt.Sprintf("none of the %s probed ran", plural(len(plan.Lines()), "line"))
			switch {
			case unrewritten:
				why += " (files not instrumented are listed above)"
			case plan.HasTests:
				why += " (does -run select the test that makes them?)"
			}
		default:
			why = fmt.Sprintf("the accesses at the %s at probed lines could not be evaluated", plural(oc.ProbeHits, "stop"))
		}
		fmt.Fprintf(w, "avcheck run: no access of the packages under test was recorded: %s\n", why)
	}
	counts := map[string]int{}
	for _, u := range oc.Unrecorded {
		counts[u.Reason]++
	}
	var parts []string
	for _, r := range []string{record.ReasonNotShared, record.ReasonUnsupported} {
		if counts[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[r], r))
		}
	}
	line := "avcheck run: not recorded: "
	if len(oc.Unrecorded) == 0 {
		line += "no access of the packages under test in the functions the run entered"
	} else {
		line += fmt.Sprintf("%s of the packages under test in the functions the run entered (%s", accessCount(len(oc.Unrecorded)), strings.Join(parts, ", "))
		if !verbose {
			line += "; -v lists them"
		}
		line += ")"
	}
	if oc.Unevaluated > 0 {
		line += fmt.Sprintf("; %s that could not be evaluated", accessCount(oc.Unevaluated))
	}
	fmt.Fprintln(w, line)
	if !verbose {
		return
	}
	for _, u := range oc.Unrecorded {
		file := relPath(dir, u.File)
		why := u.Reason
		if u.Detail != "" {
			why += ": " + u.Detail
		}
		fmt.Fprintf(w, "\t%s:%d:%d: %s: %s\n", file, u.Line.Line, u.Col, regions.Short(u.Expr), why)
	}
}

// printNotProbed lists the accesses that the instrumenting recorder
// could not probe, with why, as printUnrecorded lists the accesses not
// recorded.
func printNotProbed(w io.Writer, nps []record.NotProbed, dir string) {
	for _, np := range nps {
		kind := "read"
		if np.Write {
			kind = "write"
		}
		fmt.Fprintf(w, "\t%s:%d:%d: %s (%s): %s\n", relPath(dir, np.File), np.Line.Line, np.Col, regions.Short(np.Expr), kind, np.Why)
	}
}

// relPath returns file relative to dir if it is below it.
func relPath(dir, file string) string {
	if rel, err := filepath.Rel(dir, file); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return file
}

func accessCount(n int) string {
	if n == 1 {
		return "1 access"
	}
	return fmt.Sprintf("%d accesses", n)
}
