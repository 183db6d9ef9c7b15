package predict

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// The differential test: random small traces (two or three goroutines,
// nested locks, a read-write lock, a channel, forks, one region per
// goroutine) are searched by Predict (without AVFilter and the
// meta-analysis) and by brute force over every schedule that respects
// program order, forks, channels and lock semantics. The races, triplets
// and atomic-set violations must be the same. Sites are unique per event,
// so a site combination is an event combination.

const (
	pdX, pdY            trace.ObjID = 0x10, 0x11
	pdA, pdB, pdC, pdCh trace.ObjID = 0x20, 0x21, 0x22, 0x30
	pdAt, pdWG          trace.ObjID = 0x40, 0x50
	pdVars                          = 2
)

// pdGen generates one random valid trace, or nil when the random programs
// deadlock under the random schedule (the caller retries).
func pdGen(r *rand.Rand) *trace.Trace {
	ng := 2 + r.IntN(2)
	progs := make([][]trace.Event, ng)
	for gi := range progs {
		g := trace.GoID(gi + 1)
		var items [][]trace.Event
		var held []trace.ObjID
		var block func(depth int) []trace.Event
		access := func() trace.Event {
			k := trace.KindRead
			if r.IntN(2) == 0 {
				k = trace.KindWrite
			}
			v := pdX
			if r.IntN(pdVars) == 1 {
				v = pdY
			}
			return trace.Event{G: g, Kind: k, Obj: v}
		}
		block = func(depth int) []trace.Event {
			x := r.IntN(10)
			switch {
			case x < 3 && depth < 2:
				var free []trace.ObjID
				for _, l := range []trace.ObjID{pdA, pdB} {
					if !slices.Contains(held, l) {
						free = append(free, l)
					}
				}
				if len(free) == 0 {
					break
				}
				l := free[r.IntN(len(free))]
				held = append(held, l)
				evs := []trace.Event{{G: g, Kind: trace.KindAcquire, Obj: l}}
				for n := 1 + r.IntN(2); n > 0; n-- {
					evs = append(evs, block(depth+1)...)
				}
				held = held[:len(held)-1]
				return append(evs, trace.Event{G: g, Kind: trace.KindRelease, Obj: l})
			case x == 3 && depth == 0:
				acq, rel := trace.KindRAcquire, trace.KindRRelease
				if r.IntN(3) == 0 {
					acq, rel = trace.KindAcquire, trace.KindRelease
				}
				return []trace.Event{{G: g, Kind: acq, Obj: pdC}, access(), {G: g, Kind: rel, Obj: pdC}}
			}
			return []trace.Event{access()}
		}
		for n := 2 + r.IntN(3); n > 0; n-- {
			items = append(items, block(0))
		}
		// One region instance over a random run of top-level items.
		if r.IntN(5) > 0 {
			lo := r.IntN(len(items))
			hi := lo + 1 + r.IntN(len(items)-lo)
			for i := lo; i < hi; i++ {
				for k := range items[i] {
					items[i][k].Region = trace.RegionID(gi + 1)
					items[i][k].Inst = 1
				}
			}
		}
		for _, it := range items {
			progs[gi] = append(progs[gi], it...)
		}
	}
	// A channel message between two goroutines, at top level.
	chCap := r.IntN(2)
	if r.IntN(3) == 0 {
		s, d := r.IntN(ng), r.IntN(ng)
		if s != d {
			progs[s] = pdInsertTop(r, progs[s], trace.Event{G: trace.GoID(s + 1), Kind: trace.KindSend, Obj: pdCh, Arg: 1})
			progs[d] = pdInsertTop(r, progs[d], trace.Event{G: trace.GoID(d + 1), Kind: trace.KindRecv, Obj: pdCh, Arg: 1})
		}
	}
	// Atomic operations on one address, at top level.
	if r.IntN(3) == 0 {
		for n := 1 + r.IntN(3); n > 0; n-- {
			gi := r.IntN(ng)
			k := []trace.Kind{trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW}[r.IntN(3)]
			progs[gi] = pdInsertTop(r, progs[gi], trace.Event{G: trace.GoID(gi + 1), Kind: k, Obj: pdAt})
		}
	}
	// g1 may start the others, and then may wait for them with a WaitGroup.
	forked := r.IntN(3) == 0
	waits := forked && r.IntN(2) == 0
	if waits {
		progs[0] = pdInsertTop(r, progs[0], trace.Event{G: 1, Kind: trace.KindWGWait, Obj: pdWG})
		for gi := 1; gi < ng; gi++ {
			progs[gi] = append(progs[gi], trace.Event{G: trace.GoID(gi + 1), Kind: trace.KindWGDone, Obj: pdWG})
		}
	}
	if forked {
		var forks []trace.Event
		if waits {
			forks = append(forks, trace.Event{G: 1, Kind: trace.KindWGAdd, Obj: pdWG, Arg: uint64(ng - 1)})
		}
		for gi := 1; gi < ng; gi++ {
			forks = append(forks, trace.Event{G: 1, Kind: trace.KindFork, Arg: uint64(gi + 1)})
		}
		progs[0] = append(forks, progs[0]...)
	}
	// Interleave at random, respecting the synchronisation.
	pos := make([]int, ng)
	writer := map[trace.ObjID]int{}
	readers := map[trace.ObjID]int{}
	sent, recvd := false, false
	var wg int64
	started := make([]bool, ng)
	started[0] = true
	for gi := 1; gi < ng; gi++ {
		started[gi] = !forked
	}
	tr := &trace.Trace{Sites: []trace.Site{{}}, Objects: map[trace.ObjID]trace.Object{
		pdX: {Kind: trace.ObjVar, Name: "x"}, pdY: {Kind: trace.ObjVar, Name: "y"},
		pdA: {Kind: trace.ObjMutex, Name: "a"}, pdB: {Kind: trace.ObjMutex, Name: "b"},
		pdC: {Kind: trace.ObjRWMutex, Name: "c"}, pdCh: {Kind: trace.ObjChan, Name: "ch", Cap: chCap},
		pdAt: {Kind: trace.ObjVar, Name: "hits"}, pdWG: {Kind: trace.ObjWaitGroup, Name: "wg"},
	}}
	can := func(gi int) bool {
		if !started[gi] || pos[gi] >= len(progs[gi]) {
			return false
		}
		if pos[gi] > 0 && progs[gi][pos[gi]-1].Kind == trace.KindSend && chCap == 0 && !recvd {
			return false
		}
		e := progs[gi][pos[gi]]
		switch e.Kind {
		case trace.KindAcquire:
			_, w := writer[e.Obj]
			return !w && readers[e.Obj] == 0
		case trace.KindRAcquire:
			_, w := writer[e.Obj]
			return !w
		case trace.KindRecv:
			return sent
		case trace.KindWGWait:
			return wg == 0
		}
		return true
	}
	for {
		var ready []int
		for gi := range progs {
			if can(gi) {
				ready = append(ready, gi)
			}
		}
		if len(ready) == 0 {
			break
		}
		gi := ready[r.IntN(len(ready))]
		e := progs[gi][pos[gi]]
		pos[gi]++
		switch e.Kind {
		case trace.KindAcquire:
			writer[e.Obj] = gi
		case trace.KindRelease:
			delete(writer, e.Obj)
		case trace.KindRAcquire:
			readers[e.Obj]++
		case trace.KindRRelease:
			readers[e.Obj]--
		case trace.KindSend:
			sent = true
		case trace.KindRecv:
			recvd = true
		case trace.KindFork:
			started[e.Arg-1] = true
		case trace.KindWGAdd:
			wg += int64(e.Arg)
		case trace.KindWGDone:
			wg--
		}
		e.Seq = uint64(len(tr.Events))
		if e.Kind.IsAccess() {
			e.Site = trace.SiteID(len(tr.Sites))
			tr.Sites = append(tr.Sites, trace.Site{File: "t.go", Line: len(tr.Sites)})
		}
		tr.Events = append(tr.Events, e)
	}
	for gi := range progs {
		if pos[gi] < len(progs[gi]) {
			return nil // deadlocked
		}
	}
	return tr
}

// pdInsertTop inserts e into a program at a random point outside every
// critical section.
func pdInsertTop(r *rand.Rand, p []trace.Event, e trace.Event) []trace.Event {
	var tops []int
	depth := 0
	for i, x := range p {
		if depth == 0 {
			tops = append(tops, i)
		}
		switch x.Kind {
		case trace.KindAcquire, trace.KindRAcquire:
			depth++
		case trace.KindRelease, trace.KindRRelease:
			depth--
		}
	}
	tops = append(tops, len(p))
	return slices.Insert(p, tops[r.IntN(len(tops))], e)
}

// pdBrute enumerates the schedules of a trace: its states are the
// position vectors reachable from the start under program order, forks,
// channel messages and lock semantics.
type pdBrute struct {
	t     *trace.Trace
	gs    []trace.GoID
	evs   [][]int // per goroutine, event indices
	where []int   // per event: its position in its goroutine
	gOf   []int
	fork  map[trace.GoID]int
	send  map[uint64]int
	recv  map[uint64]int
}

func newPDBrute(t *trace.Trace) *pdBrute {
	b := &pdBrute{t: t, where: make([]int, len(t.Events)), gOf: make([]int, len(t.Events)),
		fork: map[trace.GoID]int{}, send: map[uint64]int{}, recv: map[uint64]int{}}
	gi := map[trace.GoID]int{}
	for i, e := range t.Events {
		k, ok := gi[e.G]
		if !ok {
			k = len(b.gs)
			gi[e.G] = k
			b.gs = append(b.gs, e.G)
			b.evs = append(b.evs, nil)
		}
		b.where[i] = len(b.evs[k])
		b.gOf[i] = k
		b.evs[k] = append(b.evs[k], i)
		switch e.Kind {
		case trace.KindFork:
			b.fork[trace.GoID(e.Arg)] = i
		case trace.KindSend:
			b.send[e.Arg] = i
		case trace.KindRecv:
			b.recv[e.Arg] = i
		}
	}
	return b
}

func (b *pdBrute) done(st []int, e int) bool { return st[b.gOf[e]] > b.where[e] }

// next returns goroutine k's next event if it can run in state st.
func (b *pdBrute) next(st []int, k int) (int, bool) {
	if st[k] >= len(b.evs[k]) {
		return 0, false
	}
	e := b.evs[k][st[k]]
	ev := &b.t.Events[e]
	if st[k] == 0 {
		if f, ok := b.fork[ev.G]; ok && !b.done(st, f) {
			return 0, false
		}
	}
	if st[k] > 0 {
		p := &b.t.Events[b.evs[k][st[k]-1]]
		if p.Kind == trace.KindSend && b.t.Object(p.Obj).Cap == 0 {
			if rv, ok := b.recv[p.Arg]; ok && !b.done(st, rv) {
				return 0, false
			}
		}
	}
	switch ev.Kind {
	case trace.KindWGWait:
		// Wait returns when the counter is zero.
		var n int64
		for j := range b.evs {
			for _, x := range b.evs[j][:st[j]] {
				switch xe := &b.t.Events[x]; xe.Kind {
				case trace.KindWGAdd:
					n += int64(xe.Arg)
				case trace.KindWGDone:
					n--
				}
			}
		}
		if n != 0 {
			return 0, false
		}
	case trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW:
		// An atomic operation reads what it read in the trace: the
		// operations on its address that conflict with it keep their
		// recorded order.
		for x := 0; x < e; x++ {
			xe := &b.t.Events[x]
			if xe.Obj != ev.Obj || b.done(st, x) || !xe.Kind.IsAccess() {
				continue
			}
			if xe.Kind != trace.KindAtomicLoad || ev.Kind != trace.KindAtomicLoad {
				return 0, false
			}
		}
	case trace.KindRecv:
		if s, ok := b.send[ev.Arg]; ok && !b.done(st, s) {
			return 0, false
		}
	case trace.KindAcquire, trace.KindRAcquire:
		// Who holds the lock follows from the positions.
		for j := range b.evs {
			if j == k {
				continue
			}
			depthW, depthR := 0, 0
			for _, x := range b.evs[j][:st[j]] {
				xe := &b.t.Events[x]
				if xe.Obj != ev.Obj {
					continue
				}
				switch xe.Kind {
				case trace.KindAcquire:
					depthW++
				case trace.KindRelease:
					depthW--
				case trace.KindRAcquire:
					depthR++
				case trace.KindRRelease:
					depthR--
				}
			}
			if depthW > 0 || ev.Kind == trace.KindAcquire && depthR > 0 {
				return 0, false
			}
		}
	}
	return e, true
}

// realisable reports whether some schedule runs the targets in order (and
// the first two back to back when adjacent), by search over (state, phase).
func (b *pdBrute) realisable(targets []int, adjacent bool) bool {
	seen := map[string]bool{}
	var walk func(st []int, phase int) bool
	walk = func(st []int, phase int) bool {
		if phase == len(targets) {
			return true
		}
		key := fmt.Sprint(st, phase)
		if seen[key] {
			return false
		}
		seen[key] = true
		for k := range b.evs {
			e, ok := b.next(st, k)
			if !ok {
				continue
			}
			ti := slices.Index(targets, e)
			if ti >= 0 && ti != phase {
				continue
			}
			if adjacent && phase == 1 && ti != 1 {
				continue
			}
			st[k]++
			np := phase
			if ti == phase {
				np++
			}
			ok = walk(st, np)
			st[k]--
			if ok {
				return true
			}
		}
		return false
	}
	return walk(make([]int, len(b.evs)), 0)
}

func conflict(a, b *trace.Event) bool {
	return a.Kind == trace.KindWrite || b.Kind == trace.KindWrite
}

// expected lists what brute force finds, in fixtureLine-like form keyed by
// sites.
func (b *pdBrute) expected() []string {
	t := b.t
	var out []string
	acc := func(i int) bool { e := t.Events[i]; return e.Kind == trace.KindRead || e.Kind == trace.KindWrite }
	inst := func(i int) bool { return t.Events[i].Region != 0 }
	// A region instance ends at its goroutine's waits (instValue):
	// waited[i] counts those of event i's goroutine so far.
	waited := make([]int, len(t.Events))
	seen := make(map[trace.GoID]int)
	for i, e := range t.Events {
		if endsInstance(e.Kind) {
			seen[e.G]++
		}
		waited[i] = seen[e.G]
	}
	sameInst := func(i, j int) bool {
		return inst(i) && t.Events[i].G == t.Events[j].G && t.Events[i].Region == t.Events[j].Region && t.Events[i].Inst == t.Events[j].Inst && waited[i] == waited[j]
	}
	n := len(t.Events)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			ei, ej := &t.Events[i], &t.Events[j]
			if !acc(i) || !acc(j) || ei.G == ej.G || ei.Obj != ej.Obj || !conflict(ei, ej) {
				continue
			}
			if b.realisable([]int{i, j}, true) || b.realisable([]int{j, i}, true) {
				out = append(out, fmt.Sprintf("race %d %d", min(ei.Site, ej.Site), max(ei.Site, ej.Site)))
			}
		}
	}
	for e1 := 0; e1 < n; e1++ {
		for e2 := e1 + 1; e2 < n; e2++ {
			if !acc(e1) || !acc(e2) || !sameInst(e1, e2) || t.Events[e1].Obj != t.Events[e2].Obj {
				continue
			}
			for f := 0; f < n; f++ {
				ef := &t.Events[f]
				if !acc(f) || ef.G == t.Events[e1].G || ef.Obj != t.Events[e1].Obj {
					continue
				}
				if !conflict(&t.Events[e1], ef) || !conflict(ef, &t.Events[e2]) {
					continue
				}
				canonical := true
				for k := e1 + 1; k < e2; k++ {
					if acc(k) && sameInst(k, e1) && t.Events[k].Obj == ef.Obj && conflict(&t.Events[k], ef) {
						canonical = false
					}
				}
				if canonical && b.realisable([]int{e1, f, e2}, false) {
					out = append(out, fmt.Sprintf("atomicity %d %d %d", t.Events[e1].Site, ef.Site, t.Events[e2].Site))
				}
			}
		}
	}
	for a1 := 0; a1 < n; a1++ {
		for a2 := a1 + 1; a2 < n; a2++ {
			x, y := t.Events[a1].Obj, t.Events[a2].Obj
			if !acc(a1) || !acc(a2) || !sameInst(a1, a2) || x == y {
				continue
			}
			tight := true
			for k := a1 + 1; k < a2; k++ {
				if acc(k) && sameInst(k, a1) && (t.Events[k].Obj == x || t.Events[k].Obj == y) {
					tight = false
				}
			}
			if !tight {
				continue
			}
			for bx := 0; bx < n; bx++ {
				for by := 0; by < n; by++ {
					if !acc(bx) || !acc(by) || !sameInst(bx, by) || t.Events[bx].G == t.Events[a1].G ||
						t.Events[bx].Obj != x || t.Events[by].Obj != y ||
						!conflict(&t.Events[a1], &t.Events[bx]) || !conflict(&t.Events[by], &t.Events[a2]) {
						continue
					}
					bf, bl := min(bx, by), max(bx, by)
					if b.realisable([]int{a1, bf, bl, a2}, false) {
						out = append(out, fmt.Sprintf("atomic-set %d %d %d %d", t.Events[a1].Site, t.Events[bf].Site, t.Events[bl].Site, t.Events[a2].Site))
					}
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func pdFound(t *trace.Trace) []string {
	res := Predict(t, Options{NoFilter: true})
	var out []string
	for _, f := range res.Findings {
		var s []string
		for _, a := range f.Accesses {
			s = append(s, fmt.Sprint(a.Site))
		}
		if f.Kind == KindRace && f.Accesses[0].Site > f.Accesses[1].Site {
			s[0], s[1] = s[1], s[0]
		}
		out = append(out, string(f.Kind)+" "+strings.Join(s, " "))
	}
	sort.Strings(out)
	return out
}

func pdFormat(t *trace.Trace) string {
	var b []byte
	for _, e := range t.Events {
		b = trace.AppendEvent(b, e, t)
		b = append(b, '\n')
	}
	return string(b)
}

// diffTraces and diffSeed let a longer run explore more traces:
// go test -run TestPatternDifferential -difftraces=100000 -diffseed=7
var (
	diffTraces = flag.Int("difftraces", 3000, "random traces in TestPatternDifferential")
	diffSeed   = flag.Uint64("diffseed", 1, "seed of TestPatternDifferential")
)

func TestPatternDifferential(t *testing.T) {
	n := *diffTraces
	if testing.Short() {
		n = min(n, 300)
	}
	r := rand.New(rand.NewPCG(*diffSeed, 2))
	checked, findings := 0, 0
	for checked < n {
		tr := pdGen(r)
		if tr == nil {
			continue
		}
		checked++
		want := newPDBrute(tr).expected()
		got := pdFound(tr)
		findings += len(want)
		if !slices.Equal(got, want) {
			t.Fatalf("trace %d:\n%s\ngot:\n%s\nwant:\n%s", checked, pdFormat(tr), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	t.Logf("%d random traces, %d findings, all agree with brute force", checked, findings)
}

// TestPredictGenerated runs the whole pipeline over synthetic traces of
// every shape internal/tracegen makes (channels, atomics, Once, RWMutexes,
// nested locks, regions) and checks that every reported finding's witness
// validates again from its Seqs.
func TestPredictGenerated(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	for seed := range uint64(n) {
		cfg := tracegen.Config{
			Seed: seed, Events: 500 + int(seed)*150, Goroutines: 2 + int(seed%5),
			Locks: 1 + int(seed%4), RWLocks: int(seed % 2), Vars: 2 + int(seed%3),
			Chans: int(seed % 3), Regions: 1 + int(seed%3), MaxNesting: 1 + int(seed%3),
		}
		tr := tracegen.Trace(cfg)
		res := Predict(tr, Options{All: true})
		for i := range res.Findings {
			if f := &res.Findings[i]; f.Dropped == "" {
				checkWitness(t, tr, f)
			}
		}
	}
}
