package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// TextOptions configures Text.
type TextOptions struct {
	// Dir, when set, is the directory file names are shown relative to,
	// where that is shorter (ShortPath): the current directory.
	Dir string
	// MaxWitness bounds the witness steps printed per finding; the rest
	// are summarised in one line. Zero means 40.
	MaxWitness int
}

// Text writes findings compiler-style: for each, the first access's
// position and the message, the other accesses indented below, then the
// witness schedule, one step per line (goroutine, site, operation).
func Text(w io.Writer, t *trace.Trace, fs []predict.Finding, opts TextOptions) error {
	bw := bufio.NewWriter(w)
	maxW := opts.MaxWitness
	if maxW == 0 {
		maxW = 40
	}
	bySeq := seqIndex(t)
	begins := regionBegins(t)
	tests := newTestIndex(t, fs)
	for i := range fs {
		f := &fs[i]
		if len(f.Accesses) == 0 {
			continue
		}
		pos := position(relPath(opts.Dir, t.Site(f.Accesses[0].Site)))
		fmt.Fprintf(bw, "%s: %s\n", pos, Message(t, f))
		for _, a := range f.Accesses[1:] {
			fmt.Fprintf(bw, "\t%s: g%d %s %s (%s)\n", position(relPath(opts.Dir, t.Site(a.Site))), a.G, Verb(a.Op), varOf(t, a), a.Role)
		}
		extra := f.Level.String()
		if f.Count > 1 {
			extra += fmt.Sprintf(", %d instances", f.Count)
		}
		fmt.Fprintf(bw, "\tlevel: %s\n", extra)
		switch names := tests.tests(goroutines(f)); len(names) {
		case 0:
		case 1:
			fmt.Fprintf(bw, "\ttest: %s\n", names[0])
		default:
			fmt.Fprintf(bw, "\ttests: %s\n", strings.Join(names, ", "))
		}
		if in := IntentText(t, f, opts.Dir); in != "" {
			fmt.Fprintf(bw, "\tintent: %s\n", in)
		}
		if f.Dropped != "" {
			fmt.Fprintf(bw, "\tdropped: %s\n", f.Dropped)
		}
		if f.Note != "" {
			fmt.Fprintf(bw, "\tnote: %s\n", f.Note)
		}
		if f.Replay != "" {
			fmt.Fprintf(bw, "\treplay: %s\n", f.Replay)
		}
		if f.Witness != nil {
			// Below proven, the witness keeps the locks and the
			// synchronisation's order, but no solver checked that its
			// reads can see the values the program's course needs: a
			// note may say that none could within its window.
			label := "witness"
			if f.Level < predict.LevelProven {
				label = "witness (its reads' values not checked)"
			}
			if f.WitnessFrom > 0 {
				fmt.Fprintf(bw, "\t%s: run the trace's events before #%d as recorded, then:\n", label, f.WitnessFrom)
			} else {
				fmt.Fprintf(bw, "\t%s:\n", label)
			}
			for k, seq := range f.Witness {
				if k == maxW && len(f.Witness) > maxW+1 {
					fmt.Fprintf(bw, "\t\t... %d more steps (see -json)\n", len(f.Witness)-k-1)
					seq = f.Witness[len(f.Witness)-1]
				} else if k > maxW {
					continue
				}
				e, ok := bySeq(seq)
				if !ok {
					fmt.Fprintf(bw, "\t\t#%d\n", seq)
					continue
				}
				fmt.Fprintf(bw, "\t\t%s\n", step(t, e, opts.Dir, begins))
			}
		}
	}
	return bw.Flush()
}

// step renders one witness step: goroutine, site, operation and object.
// A region's finish, which has no site of its own, shows its begin's, so
// that the two steps of one region show the same position and the
// finishes of two regions are told apart.
func step(t *trace.Trace, e *trace.Event, dir string, begins func(*trace.Event) trace.SiteID) string {
	site := e.Site
	if e.Kind == trace.KindRegionEnd && site == 0 {
		site = begins(e)
	}
	s := fmt.Sprintf("%s %s %s", goName(e.G), position(relPath(dir, t.Site(site))), e.Kind)
	switch {
	case e.Kind == trace.KindFork:
		s += " " + goName(trace.GoID(e.Arg))
	case hasObject(e.Kind):
		s += " " + varOf(t, predict.Access{Obj: e.Obj})
	}
	return s
}

// goName names goroutine g in a report: g12, or "program" for
// trace.RootG, which stands for the program itself (it starts a test's
// goroutine), and "outside" for trace.OutsideG, which stands for code
// that is not recorded (it starts the goroutines of such code).
func goName(g trace.GoID) string {
	switch g {
	case trace.RootG:
		return "program"
	case trace.OutsideG:
		return "outside"
	}
	return fmt.Sprintf("g%d", g)
}

// hasObject reports whether a witness step of kind k names the object
// it operates on: every kind but a goroutine's start and end and a
// region's bounds.
func hasObject(k trace.Kind) bool {
	switch k {
	case trace.KindFork, trace.KindEnd, trace.KindRegionBegin, trace.KindRegionEnd:
		return false
	}
	return true
}

// regionBegins returns a lookup from a region's end to its begin's site,
// 0 if there is none; it reads the trace once, at its first use.
func regionBegins(t *trace.Trace) func(*trace.Event) trace.SiteID {
	type instance struct {
		g    trace.GoID
		r    trace.RegionID
		inst uint64
	}
	var sites map[instance]trace.SiteID
	return func(e *trace.Event) trace.SiteID {
		if sites == nil {
			sites = make(map[instance]trace.SiteID)
			for i := range t.Events {
				if b := &t.Events[i]; b.Kind == trace.KindRegionBegin {
					sites[instance{b.G, b.Region, b.Inst}] = b.Site
				}
			}
		}
		return sites[instance{e.G, e.Region, e.Inst}]
	}
}

// seqIndex returns a lookup from event Seq to the event.
// goroutines returns the goroutines of f's accesses.
func goroutines(f *predict.Finding) []trace.GoID {
	gs := make([]trace.GoID, len(f.Accesses))
	for i, a := range f.Accesses {
		gs[i] = a.G
	}
	return gs
}

func seqIndex(t *trace.Trace) func(uint64) (*trace.Event, bool) {
	var m map[uint64]int
	return func(seq uint64) (*trace.Event, bool) {
		if seq < uint64(len(t.Events)) && t.Events[seq].Seq == seq {
			return &t.Events[seq], true
		}
		if m == nil {
			m = make(map[uint64]int, len(t.Events))
			for i, e := range t.Events {
				m[e.Seq] = i
			}
		}
		i, ok := m[seq]
		if !ok {
			return nil, false
		}
		return &t.Events[i], true
	}
}
