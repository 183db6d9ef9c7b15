package replay

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// Witness is the schedule a replay forces: the goroutines it names, each
// matched to a goroutine of the new run by how it was created, and the
// ordered steps, each an event of one of them at a source line.
type Witness struct {
	Goroutines []Goroutine
	Steps      []Step
	// Pair, for a race, holds the indices in Steps of its two accesses,
	// the first and the second of the finding: the replay shows the race
	// when their goroutines stand at them at once (see meeting). It is
	// nil for other findings, and when an access is not a step.
	Pair []int
}

// Goroutine names a goroutine by its creation, the same in every run of
// the program, where runtime ids are not: the Index-th goroutine (from 0,
// in the order of their ids) started by the go statement at File:Line.
// Test is set instead for a goroutine of a test that the testing package
// started: the Index-th test run.
type Goroutine struct {
	File  string
	Line  int
	Index int
	Test  bool
}

func (g Goroutine) String() string {
	if g.Test {
		return fmt.Sprintf("test run #%d", g.Index+1)
	}
	return fmt.Sprintf("goroutine #%d of the go statement at %s:%d", g.Index+1, shortFile(g.File), g.Line)
}

// Step is one event of the witness: goroutine G (an index into
// Witness.Goroutines) at File:Line, on its Visit-th arrival there (from
// 1; 0 counts as 1), does Kind. Expr, for an access, is the accessed
// expression, evaluated in the goroutine's frame when it goes; Obj, if
// not 0, names the object the witness says it accesses, so that two
// steps with one Obj must reach one address, and two with different Objs
// different ones. Seq is the event's position in the trace it was made
// from (0 for a witness written by hand), so that what the replay saw at
// a step can be told of the finding's accesses.
type Step struct {
	G     int
	File  string
	Line  int
	Visit int
	Kind  trace.Kind
	Expr  string
	Obj   trace.ObjID
	Seq   uint64
}

func (s Step) String() string {
	obj := ""
	if s.Expr != "" {
		obj = " " + s.Expr
	}
	return fmt.Sprintf("%s:%d %s%s", shortFile(s.File), s.Line, s.Kind, obj)
}

// enforced says whether a replay holds a goroutine at a step of this
// kind. Region boundaries and a goroutine's end have no line of their
// own to stop at; they follow from the steps around them.
func enforced(k trace.Kind) bool {
	switch k {
	case trace.KindRegionBegin, trace.KindRegionEnd, trace.KindEnd:
		return false
	}
	return true
}

// Sites is what the probe plan knows of the sites of a trace
// (record.Plan implements it): the source expressions of the accesses at
// a site, and whether a write there is made once a call or receive of
// its assignment returned.
type Sites interface {
	ExprsAt(trace.Site) []string
	AfterCall(trace.Site) bool
}

// FromTrace returns the witness of finding f of trace t: the steps of
// f.Witness that a replay can hold a goroutine at, with each goroutine
// named by its creation and each step's visit counted from the
// goroutine's earlier events in t. The trace's events before
// f.WitnessFrom are not forced: each goroutine runs freely up to its
// first step.
//
// An access step's expression, which the replay evaluates to check that
// it reaches the witness's variable, is the name of its object: the
// expression of the object's first access in the run. sites, if not
// nil, gives the source expressions of the accesses at a site (the probe
// plan's); where the object was first reached through another
// expression (one goroutine's b.accts[to] is another's b.accts[from]),
// the step takes its own site's (siteExpr).
//
// A write that its assignment's call or receive precedes (claimed[g] =
// r.Claim(g+1), as sites tells) is made when the goroutine is back from
// the call, in the middle of the line, where no breakpoint of the line
// stops it: like a deferred call's events, it is not held, and it is no
// new arrival at its line.
func FromTrace(t *trace.Trace, f predict.Finding, sites Sites) (*Witness, error) {
	if len(f.Witness) == 0 {
		return nil, fmt.Errorf("the finding has no witness")
	}
	bySeq := make(map[uint64]int, len(t.Events))
	for i := range t.Events {
		bySeq[t.Events[i].Seq] = i
	}
	// The goroutines' creations, in trace order: a go statement's children
	// are counted per site, the testing package's tests together.
	names := make(map[trace.GoID]Goroutine)
	counts := make(map[Goroutine]int)
	// Each goroutine's first event other than a region's begin or end
	// (a parallel test's function can begin a region before its wait).
	first := make(map[trace.GoID]int)
	for i := range t.Events {
		e := &t.Events[i]
		if _, ok := first[e.G]; !ok && e.Kind != trace.KindRegionBegin && e.Kind != trace.KindRegionEnd {
			first[e.G] = i
		}
	}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Kind != trace.KindFork {
			continue
		}
		var key Goroutine
		switch {
		case testFork(t, i, first):
			key = Goroutine{Test: true}
		case e.Site != 0:
			s := t.Site(e.Site)
			key = Goroutine{File: s.File, Line: s.Line}
		default:
			continue // the program's own goroutine: not matched
		}
		g := key
		g.Index = counts[key]
		counts[key]++
		names[trace.GoID(e.Arg)] = g
	}
	w := &Witness{}
	gIndex := make(map[trace.GoID]int)
	// visits[g][line] counts the arrivals of g at each line so far, and
	// last[g] is g's previous event, to tell a new arrival from another
	// event of the same one.
	type lineKey struct {
		file string
		line int
	}
	visits := make(map[trace.GoID]map[lineKey]int)
	last := make(map[trace.GoID]*trace.Event)
	arrive := func(e *trace.Event) int {
		if !enforced(e.Kind) || e.Site == 0 {
			return 0
		}
		s := t.Site(e.Site)
		if e.Kind == trace.KindWrite && sites != nil && sites.AfterCall(s) {
			return 0
		}
		k := lineKey{s.File, s.Line}
		if visits[e.G] == nil {
			visits[e.G] = make(map[lineKey]int)
		}
		p := last[e.G]
		same := false
		if p != nil {
			ps := t.Site(p.Site)
			// The same event again (kind, site and object) is the line
			// run again; other events at the line, such as the reads of
			// s.m and s.m[k] that one site makes, are one arrival.
			same = ps.File == s.File && ps.Line == s.Line && (p.Kind != e.Kind || p.Site != e.Site || p.Obj != e.Obj)
		}
		if !same {
			visits[e.G][k]++
		}
		last[e.G] = e
		return visits[e.G][k]
	}
	deferred := deferLines()
	inWitness := make(map[uint64]bool, len(f.Witness))
	for _, seq := range f.Witness {
		inWitness[seq] = true
	}
	// Count the arrivals of the events before the witness's first
	// departure from the recorded order, and of the witness's own events
	// in its order.
	for i := range t.Events {
		e := &t.Events[i]
		if e.Seq >= f.WitnessFrom {
			break
		}
		if !inWitness[e.Seq] {
			arrive(e)
		}
	}
	for _, seq := range f.Witness {
		i, ok := bySeq[seq]
		if !ok {
			return nil, fmt.Errorf("witness event #%d is not in the trace", seq)
		}
		e := &t.Events[i]
		visit := arrive(e)
		if visit == 0 {
			continue
		}
		if e.Obj != 0 && t.Object(e.Obj).Name == "the tests m.Run waits for" {
			// A top-level test's return, and TestMain going on after
			// m.Run, which the recorders place at the test's first line
			// and at the line of the call (or in the testing package):
			// no breakpoint stops a goroutine there then, so the step
			// is not held.
			continue
		}
		gi, ok := gIndex[e.G]
		if !ok {
			name, known := names[e.G]
			if !known {
				return nil, fmt.Errorf("goroutine g%d of witness event #%d has no creation a replay can match", e.G, seq)
			}
			gi = len(w.Goroutines)
			gIndex[e.G] = gi
			w.Goroutines = append(w.Goroutines, name)
		}
		s := t.Site(e.Site)
		if deferred(s.File, s.Line) {
			// A deferred call runs at its function's return, where no
			// breakpoint of its line stops it: the step is not held.
			continue
		}
		st := Step{G: gi, File: s.File, Line: s.Line, Visit: visit, Kind: e.Kind, Seq: e.Seq}
		if e.Kind.IsAccess() {
			st.Obj = e.Obj
			var exprsAt func(trace.Site) []string
			if sites != nil {
				exprsAt = sites.ExprsAt
			}
			st.Expr = siteExpr(t.Object(e.Obj).Name, t.Site(e.Site), exprsAt)
		}
		w.Steps = append(w.Steps, st)
	}
	if f.Kind == predict.KindRace && len(f.Accesses) == 2 {
		a := slices.IndexFunc(w.Steps, func(s Step) bool { return s.Seq == f.Accesses[0].Seq })
		b := slices.IndexFunc(w.Steps, func(s Step) bool { return s.Seq == f.Accesses[1].Seq })
		if a >= 0 && b >= 0 && w.Steps[a].G != w.Steps[b].G {
			w.Pair = []int{a, b}
		}
	}
	return w, nil
}

// deferLines returns a function that says whether a source line is a
// defer statement, reading each file once; a file it cannot read has
// none.
func deferLines() func(file string, line int) bool {
	files := make(map[string][]string)
	return func(file string, line int) bool {
		lines, ok := files[file]
		if !ok {
			if data, err := os.ReadFile(file); err == nil {
				lines = strings.Split(string(data), "\n")
			}
			files[file] = lines
		}
		return line >= 1 && line <= len(lines) && strings.HasPrefix(strings.TrimSpace(lines[line-1]), "defer ")
	}
}

// testFork says whether event i, a fork, starts a test: the recorders
// record a test's start as a fork right after the Add of its run's own
// WaitGroup object, except the instrumenting recorder's top-level tests,
// forked from the program, whose first event (region boundaries aside:
// first) is their wait for the tests before them.
func testFork(t *trace.Trace, i int, first map[trace.GoID]int) bool {
	e := &t.Events[i]
	if j, ok := first[trace.GoID(e.Arg)]; ok && e.Site == 0 {
		c := &t.Events[j]
		if c.Kind == trace.KindWGWait && t.Object(c.Obj).Name == "tests, one after another" {
			return true
		}
	}
	for j := i - 1; j >= 0; j-- {
		p := &t.Events[j]
		if p.G != e.G {
			continue
		}
		return p.Kind == trace.KindWGAdd && t.Object(p.Obj).Name == "a test's run"
	}
	return false
}

func shortFile(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// siteExpr returns the expression a replay evaluates for an access at
// site s of an object named name (see FromTrace). Of the site's
// expressions, it is the name itself if the site has it, else the one
// of the name's form with other indices (b.accts[from] for b.accts[to]),
// or the name if it is a field of one of them (x.f where x is accessed
// whole, which the recorder names so); with none or several such, the
// access is not checked (""), rather than checked through an
// expression that may reach another variable.
func siteExpr(name string, s trace.Site, exprsAt func(trace.Site) []string) string {
	if exprsAt == nil {
		return name
	}
	exprs := exprsAt(s)
	if len(exprs) == 0 || slices.Contains(exprs, name) {
		return name
	}
	for _, x := range exprs {
		if strings.HasPrefix(name, x+".") {
			return name // a field of a variable accessed whole here
		}
	}
	form := indexForm(name)
	pick := ""
	for _, x := range exprs {
		if indexForm(x) == form {
			if pick != "" {
				return ""
			}
			pick = x
		}
	}
	return pick
}

// indexForm is an expression with what its indices are left out:
// b.accts[] for b.accts[to].
func indexForm(x string) string { return indexArg.ReplaceAllString(x, "[]") }

var indexArg = regexp.MustCompile(`\[[^\[\]]*\]`)
