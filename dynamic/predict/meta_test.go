package predict

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/tracegen"
)

// tripleString renders a finding as "R@s-W@s-R@s" over site ids, the form
// the tests compare.
func tripleString(f Finding) string {
	var b strings.Builder
	for i, a := range f.Accesses {
		if i > 0 {
			b.WriteByte('-')
		}
		fmt.Fprintf(&b, "%s@%d", kindTag(a.Op), a.Site)
	}
	return b.String()
}

// kindTag names an access kind in a triple: R or W for plain accesses, the
// kind's name for atomics (findings are distinct per kind).
func kindTag(k trace.Kind) string {
	if k == trace.KindRead || k == trace.KindWrite {
		return letter(k)
	}
	return k.String()
}

func metaTriples(tr *trace.Trace) []string {
	var out []string
	for _, f := range MetaAnalysisTrace(tr) {
		out = append(out, tripleString(f))
	}
	sort.Strings(out)
	return out
}

func TestMetaHandWritten(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"lost update across two critical sections", `
			1 fork 2
			1 begin inc
			1 acq m
			1 rd n @1
			1 rel m
			1 acq m
			1 wr n @2
			1 rel m
			1 finish inc
			2 begin inc
			2 acq m
			2 rd n @1
			2 rel m
			2 acq m
			2 wr n @2
			2 rel m
			2 finish inc`, []string{"R@1-W@2-W@2"}},
		{"one critical section is atomic", `
			1 fork 2
			1 begin inc
			1 acq m
			1 rd n @1
			1 wr n @2
			1 rel m
			1 finish inc
			2 begin inc
			2 acq m
			2 rd n @1
			2 wr n @2
			2 rel m
			2 finish inc`, nil},
		{"an atomic operation's own access is not one of a region's two", `
			# 1's atomic load under mu is one operation: its event and
			# its access (trace.Outside) are not two reads.
			1 fork 2
			1 begin r
			1 acq mu
			1 aload x @1
			1 acq ax
			1 rd x @1 outside
			1 rel ax
			1 rel mu
			1 finish r
			2 armw x @2
			2 acq ax
			2 wr x @2 outside
			2 rel ax`, nil},
		{"two atomic adds that claim work are not a violation", `
			# 2's add runs between 1's two: each add acts on what it read.
			1 fork 2
			1 begin r
			1 armw i @1
			2 armw i @3
			1 armw i @2
			1 finish r`, nil},
		{"an atomic check then add is a violation", `
			1 fork 2
			1 begin r
			1 aload n @1
			2 armw n @3
			1 armw n @2
			1 finish r`, []string{"aload@1-armw@3-armw@2"}},
		{"an atomic check then store is", `
			1 fork 2
			1 begin r
			1 aload f @1
			2 astore f @3
			1 astore f @2
			1 finish r`, []string{"aload@1-astore@3-astore@2"}},
		{"accesses outside regions interleave but are not pairs", `
			1 fork 2
			1 begin r
			1 rd x @1
			1 rd x @2
			1 finish r
			2 wr x @3
			2 rd x @4
			2 rd x @5`, []string{"R@1-W@3-R@2"}},
		{"compatible acquisition histories", `
			# 1 holds m between the reads and took n after it; 2 writes
			# holding n but took no lock after it: compatible, violation.
			1 fork 2
			1 begin r
			1 acq m
			1 rd x @1
			1 acq n
			1 rel n
			1 rd x @2
			1 rel m
			1 finish r
			2 acq n
			2 wr x @3
			2 rel n`, []string{"R@1-W@3-R@2"}},
		{"incompatible acquisition histories", `
			# 1 holds m across both reads and took n after m; 2 writes
			# holding n and took m after n. Kahlon: no run has them there
			# together.
			1 fork 2
			1 begin r
			1 acq m
			1 acq n
			1 rel n
			1 rd x @1
			1 rd x @2
			1 rel m
			1 finish r
			2 acq n
			2 acq m
			2 rel m
			2 wr x @3
			2 rel n`, nil},
		{"readers do not exclude each other", `
			rw m
			1 fork 2
			1 begin r
			1 racq m
			1 rd x @1
			1 rrel m
			1 racq m
			1 rd x @2
			1 rrel m
			1 finish r
			2 racq m
			2 wr x @3
			2 rrel m`, []string{"R@1-W@3-R@2"}},
		{"reader and writer exclude", `
			rw m
			1 fork 2
			1 begin r
			1 racq m
			1 rd x @1
			1 rd x @2
			1 rrel m
			1 finish r
			2 acq m
			2 wr x @3
			2 rel m`, nil},
		{"channel orders the writer after the region", `
			chan c 1
			1 fork 2
			1 begin r
			1 rd x @1
			1 rd x @2
			1 finish r
			1 send c 1
			2 recv c 1
			2 wr x @3`, nil},
		{"channel orders the writer before the region", `
			chan c 1
			1 fork 2
			2 wr x @3
			2 send c 1
			1 recv c 1
			1 begin r
			1 rd x @1
			1 rd x @2
			1 finish r`, nil},
		{"channel inside the region splits it", `
			# 2's write must come after 1's send and before 2's send;
			# between the reads: a violation.
			chan c 0
			chan d 0
			1 fork 2
			1 begin r
			1 rd x @1
			1 send c 1
			2 recv c 1
			2 wr x @3
			2 send d 1
			1 recv d 1
			1 rd x @2
			1 finish r`, []string{"R@1-W@3-R@2"}},
		{"waitgroup", `
			1 fork 2
			1 wgadd w 1
			2 wr x @3
			2 wgdone w
			1 wgwait w
			1 begin r
			1 rd x @1
			1 rd x @2
			1 finish r`, nil},
		{"cond", `
			1 fork 2
			2 wr x @3
			2 csignal c
			1 cwait c
			1 begin r
			1 rd x @1
			1 rd x @2
			1 finish r`, nil},
		{"once", `
			1 fork 2
			2 wr x @3
			2 once o 1
			1 once o 0
			1 begin r
			1 rd x @1
			1 rd x @2
			1 finish r`, nil},
		{"fork after the region", `
			1 begin r
			1 rd x @1
			1 rd x @2
			1 finish r
			1 fork 2
			2 wr x @3`, nil},
		{"nested regions: the outermost counts", `
			1 fork 2
			1 begin outer
			1 begin inner
			1 rd x @1
			1 finish inner
			1 begin inner
			1 wr x @2
			1 finish inner
			1 finish outer
			2 wr x @3`, []string{"R@1-W@3-W@2"}},
		{"regions given by the events' region fields", `
			1 fork 2
			1 rd x @1 in=r.1
			1 rd x @2 in=r.1
			1 rd x @3 in=r.2
			2 wr x @4
			1 rd x @5 in=r.2
			1 rd x @6`, []string{"R@1-W@4-R@2", "R@3-W@4-R@5"}},
		{"W-R-W", `
			1 fork 2
			1 begin r
			1 wr x @1
			1 wr x @2
			1 finish r
			2 rd x @3`, []string{"W@1-R@3-W@2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := metaTriples(tt(t, tc.src))
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMetaFinding(t *testing.T) {
	tr := tt(t, `
		1 fork 2
		1 begin r
		1 rd x @1
		2 wr x @3
		1 rd x @2
		1 finish r`)
	fs := MetaAnalysisTrace(tr)
	if len(fs) != 1 {
		t.Fatalf("got %d findings", len(fs))
	}
	f := fs[0]
	want := Finding{Kind: KindAtomicity, Pattern: "R-W-R", Level: LevelPredicted, Var: "x", Count: 1,
		Accesses: []Access{
			{Seq: 2, G: 1, Op: trace.KindRead, Obj: tr.Events[2].Obj, Site: 1, Role: "first"},
			{Seq: 3, G: 2, Op: trace.KindWrite, Obj: tr.Events[2].Obj, Site: 3, Role: "interleaved"},
			{Seq: 4, G: 1, Op: trace.KindRead, Obj: tr.Events[2].Obj, Site: 2, Role: "last"},
		}}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", f, want)
	}
}

// bruteForce is the reference for the meta-analysis: it explores every
// interleaving of prefixes of the goroutines (the inferred runs of seed
// 004, section 2) that respects lock semantics and the happens-before
// edges that are not locks, and returns the site triples that some run
// realises with e1 < f < e2. deadlock reports whether some inferred run
// gets stuck, in which case Lemma 2's assumption fails.
type bruteForce struct {
	tr    *trace.Trace
	gs    [][]int                      // event indices per goroutine
	gpos  []int                        // goroutine of each event (dense)
	pos   []int                        // position of each event in its goroutine
	req   [][]int                      // req[ev][g]: events of g that must have run before ev
	held  [][]map[trace.ObjID]LockMode // held[g][p]: locks held after p events
	tx    []int                        // transaction of each event, -1 outside regions
	radix []int
}

func newBruteForce(tr *trace.Trace) *bruteForce {
	b := &bruteForce{tr: tr}
	idx := map[trace.GoID]int{}
	h := NewHB(HBOptions{Object: tr.Object})
	eps := make([]Epoch, len(tr.Events))
	vcs := make([]VC, len(tr.Events))
	for i := range tr.Events {
		e := &tr.Events[i]
		g, ok := idx[e.G]
		if !ok {
			g = len(b.gs)
			idx[e.G] = g
			b.gs = append(b.gs, nil)
		}
		b.gpos = append(b.gpos, g)
		b.pos = append(b.pos, len(b.gs[g]))
		b.gs[g] = append(b.gs[g], i)
		vcs[i] = h.Step(e).Clone()
		eps[i] = h.Epoch()
	}
	hbIdx := func(g int) int { return h.Index(tr.Events[b.gs[g][0]].G) }
	b.req = make([][]int, len(tr.Events))
	for i := range tr.Events {
		b.req[i] = make([]int, len(b.gs))
		for g := range b.gs {
			if g == b.gpos[i] {
				continue
			}
			hg := hbIdx(g)
			n := 0
			for p, ev := range b.gs[g] {
				if eps[ev].G == hg && eps[ev].C <= vcs[i].Get(hg) {
					n = p + 1
				}
			}
			b.req[i][g] = n
		}
	}
	b.held = make([][]map[trace.ObjID]LockMode, len(b.gs))
	b.tx = make([]int, len(tr.Events))
	ntx := 0
	for g, evs := range b.gs {
		cur := map[trace.ObjID]LockMode{}
		depth := map[trace.ObjID]int{}
		b.held[g] = append(b.held[g], maps.Clone(cur))
		rdepth := 0
		for _, ev := range evs {
			e := &tr.Events[ev]
			b.tx[ev] = -1
			switch e.Kind {
			case trace.KindAcquire, trace.KindRAcquire:
				if depth[e.Obj] == 0 {
					cur[e.Obj] = ModeWrite
					if e.Kind == trace.KindRAcquire {
						cur[e.Obj] = ModeRead
					}
				}
				depth[e.Obj]++
			case trace.KindRelease, trace.KindRRelease:
				depth[e.Obj]--
				if depth[e.Obj] == 0 {
					delete(cur, e.Obj)
				}
			case trace.KindRegionBegin:
				rdepth++
				if rdepth == 1 {
					ntx++
				}
			case trace.KindRegionEnd:
				rdepth--
			}
			if rdepth > 0 && e.Kind.IsAccess() {
				b.tx[ev] = ntx
			}
			b.held[g] = append(b.held[g], maps.Clone(cur))
		}
	}
	b.radix = make([]int, len(b.gs))
	for g := range b.gs {
		b.radix[g] = len(b.gs[g]) + 1
	}
	return b
}

// states returns the number of distinct keys.
func (b *bruteForce) states() int {
	n := 2
	for _, r := range b.radix {
		n *= r
	}
	return n
}

func (b *bruteForce) key(p []int, flag int) int {
	k := 0
	for g, x := range p {
		k = k*b.radix[g] + x
	}
	return k*2 + flag
}

// enabled reports whether goroutine g can run its next event in state p.
func (b *bruteForce) enabled(p []int, g int) bool {
	if p[g] >= len(b.gs[g]) {
		return false
	}
	ev := b.gs[g][p[g]]
	for u, n := range b.req[ev] {
		if p[u] < n {
			return false
		}
	}
	e := &b.tr.Events[ev]
	if e.Kind == trace.KindAcquire || e.Kind == trace.KindRAcquire {
		mode := ModeWrite
		if e.Kind == trace.KindRAcquire {
			mode = ModeRead
		}
		if b.held[g][p[g]][e.Obj] != 0 {
			return true // recursive
		}
		for u := range b.gs {
			if u == g {
				continue
			}
			if hm := b.held[u][p[u]][e.Obj]; hm != 0 && conflicts(hm, mode) {
				return false
			}
		}
	}
	return true
}

// decode sets p to the positions of key k (without its flag bit) and
// returns the flag.
func (b *bruteForce) decode(k int, p []int) int {
	flag := k & 1
	k >>= 1
	for g := len(p) - 1; g >= 0; g-- {
		p[g] = k % b.radix[g]
		k /= b.radix[g]
	}
	return flag
}

// deadlocks reports whether some inferred run gets stuck before the end.
func (b *bruteForce) deadlocks() bool {
	seen := make([]bool, b.states())
	p := make([]int, len(b.gs))
	stack := []int{b.key(p, 0)}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[k] {
			continue
		}
		seen[k] = true
		b.decode(k, p)
		moved, done := false, true
		for g := range b.gs {
			if p[g] < len(b.gs[g]) {
				done = false
			}
			if b.enabled(p, g) {
				moved = true
				p[g]++
				stack = append(stack, b.key(p, 0))
				p[g]--
			}
		}
		if !moved && !done {
			return true
		}
	}
	return false
}

// realisable reports whether some inferred run has e1 < f < e2.
func (b *bruteForce) realisable(e1, f, e2 int) bool {
	tg := b.gpos[e1]
	seen := make([]bool, b.states())
	p := make([]int, len(b.gs))
	stack := []int{b.key(p, 0)}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[k] {
			continue
		}
		seen[k] = true
		flag := b.decode(k, p)
		for g := range b.gs {
			if !b.enabled(p, g) {
				continue
			}
			ev := b.gs[g][p[g]]
			nflag := flag
			switch ev {
			case e2:
				if flag == 1 {
					return true
				}
				continue
			case f:
				if p[tg] > b.pos[e1] && p[tg] <= b.pos[e2] {
					nflag = 1
				} else {
					continue
				}
			}
			p[g]++
			stack = append(stack, b.key(p, nflag))
			p[g]--
		}
	}
	return false
}

// triples returns every realisable site triple.
func (b *bruteForce) triples() []string {
	found := map[string]bool{}
	evs := b.tr.Events
	for e1 := range evs {
		if b.tx[e1] < 0 || evs[e1].Flags&trace.Outside != 0 {
			continue
		}
		for e2 := e1 + 1; e2 < len(evs); e2++ {
			if b.tx[e2] != b.tx[e1] || evs[e2].Obj != evs[e1].Obj || evs[e2].Flags&trace.Outside != 0 {
				continue
			}
			if evs[e1].Kind == trace.KindAtomicRMW && evs[e2].Kind == trace.KindAtomicRMW {
				continue // not a pair (meta.go, role e2)
			}
			for f := range evs {
				if b.gpos[f] == b.gpos[e1] || !evs[f].Kind.IsAccess() || evs[f].Obj != evs[e1].Obj {
					continue
				}
				if !dependent(evs[e1].Kind, evs[f].Kind) || !dependent(evs[f].Kind, evs[e2].Kind) {
					continue
				}
				k := fmt.Sprintf("%s@%d-%s@%d-%s@%d", kindTag(evs[e1].Kind), evs[e1].Site,
					kindTag(evs[f].Kind), evs[f].Site, kindTag(evs[e2].Kind), evs[e2].Site)
				if found[k] {
					continue
				}
				if b.realisable(e1, f, e2) {
					found[k] = true
				}
			}
		}
	}
	var out []string
	for k := range found {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// genConfig bounds the random traces of the differential tests.
type genConfig struct {
	goroutines int  // 2 or 3
	vars       int  // 1 or 2
	locks      int  // mutexes; the last is a RWMutex
	chans      int  // channel messages between goroutines
	wgs        bool // a WaitGroup join
	lockOrder  bool // acquire locks in one global order only (no lock-order inversion)
	items      int  // top-level items per goroutine
	atomics    int  // atomic operations on one address, spread over the goroutines
	anywhere   bool // synchronisation may also go inside critical sections
}

// genOp is one operation of a generated goroutine program.
type genOp struct {
	kind trace.Kind
	obj  trace.ObjID
	arg  uint64
	site trace.SiteID
	reg  trace.RegionID
}

// randomTrace builds a goroutine program per goroutine from random items
// (accesses, nested critical sections, nested regions, channel messages)
// and runs them under a random scheduler that respects locks, channels
// and WaitGroups, so the result is a valid trace. It returns nil when the
// schedule gets stuck.
func randomTrace(rng *rand.Rand, cfg genConfig) *trace.Trace {
	const (
		varBase  = 1
		lockBase = 10
		chanBase = 20
		wgObj    = 30
	)
	tr := &trace.Trace{Objects: map[trace.ObjID]trace.Object{}}
	for i := 0; i < cfg.vars; i++ {
		tr.Objects[trace.ObjID(varBase+i)] = trace.Object{Kind: trace.ObjVar, Name: string(rune('x' + i))}
	}
	for i := 0; i < cfg.locks; i++ {
		k := trace.ObjMutex
		if i == cfg.locks-1 {
			k = trace.ObjRWMutex
		}
		tr.Objects[trace.ObjID(lockBase+i)] = trace.Object{Kind: k, Name: fmt.Sprintf("m%d", i)}
	}
	progs := make([][]genOp, cfg.goroutines)
	for g := range progs {
		site := func() trace.SiteID { return trace.SiteID(100*(g+1) + rng.IntN(4)) }
		var gen func(depth int, held []int) []genOp
		gen = func(depth int, held []int) []genOp {
			var ops []genOp
			n := 1 + rng.IntN(3)
			if depth == 0 {
				n = cfg.items
			}
			for range n {
				switch r := rng.IntN(10); {
				case r < 5 || depth >= 3:
					k := trace.KindRead
					if rng.IntN(2) == 0 {
						k = trace.KindWrite
					}
					ops = append(ops, genOp{kind: k, obj: trace.ObjID(varBase + rng.IntN(cfg.vars)), site: site()})
				case r < 8 && cfg.locks > 0:
					l := rng.IntN(cfg.locks)
					if slices.Contains(held, l) {
						continue
					}
					if cfg.lockOrder && len(held) > 0 && l < held[len(held)-1] {
						continue
					}
					obj := trace.ObjID(lockBase + l)
					acq, rel := trace.KindAcquire, trace.KindRelease
					if tr.Objects[obj].Kind == trace.ObjRWMutex && rng.IntN(2) == 0 {
						acq, rel = trace.KindRAcquire, trace.KindRRelease
					}
					ops = append(ops, genOp{kind: acq, obj: obj})
					ops = append(ops, gen(depth+1, append(held, l))...)
					ops = append(ops, genOp{kind: rel, obj: obj})
				default:
					reg := trace.RegionID(1 + rng.IntN(2))
					ops = append(ops, genOp{kind: trace.KindRegionBegin, reg: reg})
					ops = append(ops, gen(depth+1, held)...)
					ops = append(ops, genOp{kind: trace.KindRegionEnd, reg: reg})
				}
			}
			return ops
		}
		progs[g] = gen(0, nil)
	}
	// insert at a random top-level position (outside critical sections
	// is not required: a send inside one is legal Go)
	// Synchronisation goes only where the goroutine holds no lock (see
	// the exactness note in meta.go): lockFree lists those positions.
	lockFree := func(g, from int) []int {
		var ps []int
		depth := 0
		for i := 0; i <= len(progs[g]); i++ {
			if (depth == 0 || cfg.anywhere) && i >= from {
				ps = append(ps, i)
			}
			if i < len(progs[g]) {
				switch progs[g][i].kind {
				case trace.KindAcquire, trace.KindRAcquire:
					depth++
				case trace.KindRelease, trace.KindRRelease:
					depth--
				}
			}
		}
		return ps
	}
	insertFrom := func(g, from int, op genOp) {
		ps := lockFree(g, from)
		progs[g] = slices.Insert(progs[g], ps[rng.IntN(len(ps))], op)
	}
	insert := func(g int, op genOp) { insertFrom(g, 0, op) }
	for c := 0; c < cfg.chans; c++ {
		s := rng.IntN(cfg.goroutines)
		r := (s + 1 + rng.IntN(cfg.goroutines-1)) % cfg.goroutines
		obj := trace.ObjID(chanBase + c)
		tr.Objects[obj] = trace.Object{Kind: trace.ObjChan, Name: fmt.Sprintf("c%d", c), Cap: rng.IntN(2)}
		insert(s, genOp{kind: trace.KindSend, obj: obj, arg: 1})
		insert(r, genOp{kind: trace.KindRecv, obj: obj, arg: 1})
	}
	if cfg.wgs {
		w := rng.IntN(cfg.goroutines)
		d := (w + 1 + rng.IntN(cfg.goroutines-1)) % cfg.goroutines
		tr.Objects[wgObj] = trace.Object{Kind: trace.ObjWaitGroup, Name: "wg"}
		progs[w] = slices.Insert(progs[w], 0, genOp{kind: trace.KindWGAdd, obj: wgObj, arg: 1})
		insert(d, genOp{kind: trace.KindWGDone, obj: wgObj})
		insertFrom(w, 1, genOp{kind: trace.KindWGWait, obj: wgObj})
	}
	for a := 0; a < cfg.atomics; a++ {
		const atomicObj = 40
		k := []trace.Kind{trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW}[rng.IntN(3)]
		insert(rng.IntN(cfg.goroutines), genOp{kind: k, obj: atomicObj})
	}
	// goroutine 0 forks the others at random points
	for g := 1; g < cfg.goroutines; g++ {
		insert(0, genOp{kind: trace.KindFork, arg: uint64(g + 1)})
	}

	// run
	pc := make([]int, cfg.goroutines)
	started := make([]bool, cfg.goroutines)
	started[0] = true
	owner := map[trace.ObjID]int{}   // writer holder
	readers := map[trace.ObjID]int{} // reader count
	sends, recvs := map[trace.ObjID]int{}, map[trace.ObjID]int{}
	waitRecv := make([]trace.ObjID, cfg.goroutines) // blocked after an unbuffered send
	wg := 0
	inst := map[[2]uint64]uint64{}
	enabled := func(g int) bool {
		if !started[g] || pc[g] >= len(progs[g]) {
			return false
		}
		if c := waitRecv[g]; c != 0 {
			if recvs[c] < sends[c] {
				return false
			}
			waitRecv[g] = 0
		}
		op := progs[g][pc[g]]
		switch op.kind {
		case trace.KindAcquire:
			_, busy := owner[op.obj]
			return !busy && readers[op.obj] == 0
		case trace.KindRAcquire:
			_, busy := owner[op.obj]
			return !busy
		case trace.KindSend:
			return sends[op.obj]-recvs[op.obj] < max(tr.Objects[op.obj].Cap, 1)
		case trace.KindRecv:
			return sends[op.obj] > recvs[op.obj]
		case trace.KindWGWait:
			return wg == 0
		case trace.KindWGDone:
			return wg > 0
		}
		return true
	}
	for {
		var en []int
		for g := range progs {
			if enabled(g) {
				en = append(en, g)
			}
		}
		if len(en) == 0 {
			break
		}
		g := en[rng.IntN(len(en))]
		op := progs[g][pc[g]]
		pc[g]++
		e := trace.Event{Seq: uint64(len(tr.Events)), G: trace.GoID(g + 1), Kind: op.kind, Obj: op.obj, Arg: op.arg, Site: op.site, Region: op.reg}
		switch op.kind {
		case trace.KindAcquire:
			owner[op.obj] = g
		case trace.KindRelease:
			delete(owner, op.obj)
		case trace.KindRAcquire:
			readers[op.obj]++
		case trace.KindRRelease:
			readers[op.obj]--
		case trace.KindSend:
			sends[op.obj]++
			if tr.Objects[op.obj].Cap == 0 {
				waitRecv[g] = op.obj
			}
		case trace.KindRecv:
			recvs[op.obj]++
		case trace.KindFork:
			started[op.arg-1] = true
		case trace.KindWGAdd:
			wg++
		case trace.KindWGDone:
			wg--
		case trace.KindRegionBegin:
			inst[[2]uint64{uint64(g), uint64(op.reg)}]++
			e.Inst = inst[[2]uint64{uint64(g), uint64(op.reg)}]
		case trace.KindRegionEnd:
			e.Inst = inst[[2]uint64{uint64(g), uint64(op.reg)}]
		}
		tr.Events = append(tr.Events, e)
	}
	for g := range progs {
		if pc[g] < len(progs[g]) {
			return nil
		}
	}
	return tr
}

func formatTrace(tr *trace.Trace) string {
	var b strings.Builder
	for _, e := range tr.Events {
		fmt.Fprintf(&b, "%d %s", e.G, e.Kind)
		switch e.Kind {
		case trace.KindFork:
			fmt.Fprintf(&b, " %d", e.Arg)
		case trace.KindRegionBegin, trace.KindRegionEnd:
			fmt.Fprintf(&b, " r%d", e.Region)
		default:
			fmt.Fprintf(&b, " %s", tr.Objects[e.Obj].Name)
			if e.Kind == trace.KindSend || e.Kind == trace.KindRecv {
				fmt.Fprintf(&b, " %d", e.Arg)
			}
		}
		if e.Site != 0 {
			fmt.Fprintf(&b, " @%d", e.Site)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func runMetaDifferential(t *testing.T, name string, cfg genConfig, n int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	checked, skippedDeadlock, withFindings := 0, 0, 0
	mismatches := 0
	for checked < n {
		tr := randomTrace(rng, cfg)
		if tr == nil {
			continue
		}
		b := newBruteForce(tr)
		if b.deadlocks() {
			skippedDeadlock++
			if skippedDeadlock > 20*n {
				t.Fatalf("%s: too many deadlocking traces", name)
			}
			continue
		}
		checked++
		want := b.triples()
		got := metaTriples(tr)
		if len(want) > 0 {
			withFindings++
		}
		if !slices.Equal(got, want) {
			mismatches++
			if mismatches <= 3 {
				t.Errorf("%s: trace %d:\n%s\nmeta-analysis: %q\nenumeration:   %q", name, checked, formatTrace(tr), got, want)
			}
		}
	}
	t.Logf("%s: %d traces (%d with violations), %d skipped as deadlock-prone, %d mismatches", name, checked, withFindings, skippedDeadlock, mismatches)
}

func TestMetaDifferential(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	runMetaDifferential(t, "locks", genConfig{goroutines: 2, vars: 1, locks: 3, items: 4}, n, 1)
	runMetaDifferential(t, "locks-ordered-3g", genConfig{goroutines: 3, vars: 2, locks: 3, items: 3, lockOrder: true}, n, 2)
	runMetaDifferential(t, "sync", genConfig{goroutines: 2, vars: 1, locks: 2, chans: 2, wgs: true, items: 4}, n, 3)
	runMetaDifferential(t, "sync-3g", genConfig{goroutines: 3, vars: 1, locks: 2, chans: 2, wgs: true, items: 3, lockOrder: true}, n, 4)
	runMetaDifferential(t, "atomics", genConfig{goroutines: 2, vars: 1, locks: 2, chans: 1, atomics: 4, items: 4}, n, 5)
}

// TestMetaNeverMisses covers what the exact comparison leaves out: locks
// held across synchronisation, and runs that can deadlock. There the
// analysis may report a triple no interleaving realises, but it must
// report every one that some interleaving does (its conditions are all
// necessary ones).
func TestMetaNeverMisses(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	rng := rand.New(rand.NewPCG(6, 1))
	checked, extra := 0, 0
	for checked < n {
		tr := randomTrace(rng, genConfig{goroutines: 3, vars: 1, locks: 3, chans: 2, wgs: true, atomics: 1, items: 3, anywhere: true})
		if tr == nil {
			continue
		}
		checked++
		want := newBruteForce(tr).triples()
		got := metaTriples(tr)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Fatalf("missed %s in\n%s\nmeta-analysis: %q\nenumeration:   %q", w, formatTrace(tr), got, want)
			}
		}
		if len(got) > len(want) {
			extra++
		}
	}
	t.Logf("%d traces, %d with triples no interleaving realises", checked, extra)
}

// TestCoreFixtures runs meta-analysis and observed mode over the txtar
// fixtures in testdata/core: a "trace" section in the text format, the
// expected meta-analysis findings ("pattern variable e1 f e2", by source
// position, one per line) and the expected observed-mode verdict
// ("serializable" or "cycle at SEQ", the closing event).
func TestCoreFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/core/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string]string{}
			for _, f := range ar.Files {
				sections[f.Name] = string(f.Data)
			}
			tr, err := trace.ReadAll(trace.NewTextReader(strings.NewReader(sections["trace"]), file))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range MetaAnalysisTrace(tr) {
				line := f.Pattern + " " + f.Var
				for _, a := range f.Accesses {
					line += " " + tr.Site(a.Site).String()
				}
				got = append(got, line)
			}
			sort.Strings(got)
			want := strings.Fields(strings.ReplaceAll(sections["meta"], " ", "\x00"))
			for i := range want {
				want[i] = strings.ReplaceAll(want[i], "\x00", " ")
			}
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("meta-analysis:\ngot  %q\nwant %q", got, want)
			}
			verdict := "serializable"
			if f := CheckObservedTrace(tr); f != nil {
				verdict = fmt.Sprintf("cycle at %d", f.Accesses[2].Seq)
			}
			if w := strings.TrimSpace(sections["observed"]); verdict != w {
				t.Errorf("observed: got %q, want %q", verdict, w)
			}
		})
	}
}

// metaWith runs the meta-analysis over tr and returns its findings and its
// final statistics. It collects lock states as the command does from min
// interned states on (instead of minCollect), never if min is 0, and
// after every event if min is negative.
func metaWith(tr *trace.Trace, min int) (findings []Finding, states, fClasses int) {
	m := NewMeta(MetaOptions{Object: tr.Object})
	if min > 0 {
		m.collectAt, m.collectMin = min, min
	} else {
		m.collectAt, m.collectMin = math.MaxInt, math.MaxInt
	}
	for i := range tr.Events {
		m.Step(&tr.Events[i])
		if min < 0 {
			m.collect()
		}
	}
	states, fClasses, _ = m.Stats()
	return m.Findings(), states, fClasses
}

// TestMetaCollect checks that forgetting lock states (Meta.collect: states
// covered by others dropped from the f groups and summaries, then the
// unused ones forgotten and their ids reused) changes no finding, not even
// the accesses reported for it, on random traces with a collection after
// every event and on a generated trace with deep, varied nesting,
// where it must also keep far fewer states.
func TestMetaCollect(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	rng := rand.New(rand.NewPCG(7, 1))
	for checked := 0; checked < n; {
		tr := randomTrace(rng, genConfig{goroutines: 3, vars: 2, locks: 3, chans: 1, wgs: true, atomics: 1, items: 4, anywhere: true})
		if tr == nil {
			continue
		}
		checked++
		want, _, _ := metaWith(tr, 0)
		got, _, _ := metaWith(tr, -1)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("collecting changed the findings of\n%s\nwith: %v\nwithout: %v", formatTrace(tr), got, want)
		}
	}

	cfg := coreBenchConfig(400_000)
	if testing.Short() {
		cfg.Events = 100_000
	}
	cfg.Regions = 16
	tr := tracegen.Trace(cfg)
	want, wantStates, wantF := metaWith(tr, 0)
	got, states, fClasses := metaWith(tr, 64)
	if len(want) == 0 {
		t.Fatal("no findings on the generated trace")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("collecting changed the findings of the generated trace:\nwith: %v\nwithout: %v", got, want)
	}
	t.Logf("%d events: lock states %d -> %d, f classes %d -> %d", len(tr.Events), wantStates, states, wantF, fClasses)
	if states*4 > wantStates || fClasses > wantF {
		t.Errorf("collecting kept %d lock states and %d f classes of %d and %d", states, fClasses, wantStates, wantF)
	}
}

// TestMetaPrune checks which lock states of an f group a collection
// forgets: a state that a more recent one covers (goroutine 2's write
// under m with history {n, o}, after the one under m with history {n}),
// but not one that is only older (the write under m with history {p}),
// nor one the more recent state does not cover (under m and q).
func TestMetaPrune(t *testing.T) {
	tr := tt(t, `
		2 acq m
		2 acq p
		2 rel p
		2 wr x @9
		2 rel m
		2 acq m
		2 acq q
		2 wr x @9
		2 rel q
		2 acq n
		2 rel n
		2 acq o
		2 rel o
		2 wr x @9
		2 rel m
		2 acq m
		2 acq n
		2 rel n
		2 wr x @9
		2 rel m
		1 acq m
		1 rel m`)
	_, _, without := metaWith(tr, 0)
	_, _, with := metaWith(tr, -1)
	if without != 4 || with != 3 {
		t.Errorf("f classes: %d without collecting, %d with; want 4 and 3", without, with)
	}
}
