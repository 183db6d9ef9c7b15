package solve

import (
	"math/rand/v2"
)

// window is a random trace window shaped like the precise stage's
// instances: a recorded run of a few goroutines over a few locks and
// shared variables, and the constraints of its feasible interleavings.
type window struct {
	n         int
	gor       []int // goroutine of each event
	po        [][2]int
	sections  [][2]int // lock: acquire and release event of each section
	lockOf    []int    // lock of each section
	reads     []int    // reads whose value matters
	readVar   []int
	readVal   []int
	writes    [][]int // per variable: its write events
	writeVal  []int   // per event: the value written, if a write
	goroutine [][]int // per goroutine: its events in program order
}

// randomWindow simulates a run of n events (event i is the i-th of the run)
// by goroutines goroutines that take locks locks around accesses to vars
// variables with small values, so that the recorded order is one solution.
func randomWindow(r *rand.Rand, n, goroutines, locks, vars int) *window {
	w := &window{n: n, gor: make([]int, n), writes: make([][]int, vars), writeVal: make([]int, n),
		goroutine: make([][]int, goroutines)}
	holder := make([]int, locks) // goroutine holding each lock, or -1
	for i := range holder {
		holder[i] = -1
	}
	held := make([]int, goroutines) // lock each goroutine holds, or -1
	acq := make([]int, goroutines)  // its acquire event
	left := make([]int, goroutines) // accesses left in its section
	value := make([]int, vars)      // current value of each variable
	for i := range held {
		held[i] = -1
	}
	for e := 0; e < n; e++ {
		g := r.IntN(goroutines)
		// A goroutine waiting for a held lock lets another one run.
		for held[g] < 0 && e < n-1 && r.IntN(3) == 0 {
			l := r.IntN(locks)
			if holder[l] < 0 {
				holder[l], held[g], acq[g], left[g] = g, l, e, 1+r.IntN(6)
				break
			}
			g = r.IntN(goroutines)
		}
		w.gor[e] = g
		w.goroutine[g] = append(w.goroutine[g], e)
		switch {
		case held[g] >= 0 && acq[g] == e:
			// the acquire itself
		case held[g] >= 0 && left[g] == 0:
			w.sections = append(w.sections, [2]int{acq[g], e})
			w.lockOf = append(w.lockOf, held[g])
			holder[held[g]], held[g] = -1, -1
		default:
			if held[g] >= 0 {
				left[g]--
			}
			x := r.IntN(vars)
			if r.IntN(2) == 0 {
				value[x] = r.IntN(3)
				w.writes[x] = append(w.writes[x], e)
				w.writeVal[e] = value[x]
			} else if r.IntN(3) == 0 {
				w.reads = append(w.reads, e)
				w.readVar = append(w.readVar, x)
				w.readVal = append(w.readVal, value[x])
			}
		}
	}
	for _, evs := range w.goroutine {
		for i := 1; i < len(evs); i++ {
			w.po = append(w.po, [2]int{evs[i-1], evs[i]})
		}
	}
	return w
}

// encode asserts the window's constraints on s, in the style of seed 001
// section 4.2: program order as edges, lock mutual exclusion as a
// disjunction of the two orders of every two sections of one lock in
// different goroutines (sections still open at the window's end are left
// out), and for every read that matters, that it reads a write of the value
// it read (or the initial 0) with no other write of the variable between.
func (w *window) encode(s Solver) {
	for _, e := range w.po {
		s.Edge(e[0], e[1])
	}
	for i, a := range w.sections {
		for j := i + 1; j < len(w.sections); j++ {
			b := w.sections[j]
			if w.lockOf[i] != w.lockOf[j] || w.gor[a[0]] == w.gor[b[0]] {
				continue
			}
			s.Assert(s.Or(s.Before(a[1], b[0]), s.Before(b[1], a[0])))
		}
	}
	for i, rd := range w.reads {
		ws := w.writes[w.readVar[i]]
		var alts []Lit
		for _, wr := range ws {
			if w.writeVal[wr] != w.readVal[i] || wr == rd {
				continue
			}
			if w.gor[wr] == w.gor[rd] && wr > rd {
				continue // a later write of the same goroutine
			}
			conj := []Lit{s.Before(wr, rd)}
			for _, other := range ws {
				if other != wr && other != rd {
					conj = append(conj, s.Or(s.Before(other, wr), s.Before(rd, other)))
				}
			}
			alts = append(alts, s.And(conj...))
		}
		if w.readVal[i] == 0 {
			var conj []Lit
			for _, other := range ws {
				if other != rd {
					conj = append(conj, s.Before(rd, other))
				}
			}
			alts = append(alts, s.And(conj...))
		}
		s.Assert(s.Or(alts...))
	}
}

// candidate returns assumptions that place an event of one goroutine
// between two nearby events of another, like a predicted violation
// e1 < f < e2.
func (w *window) candidate(r *rand.Rand, s Solver) []Lit {
	for {
		g := r.IntN(len(w.goroutine))
		evs := w.goroutine[g]
		if len(evs) < 3 {
			continue
		}
		i := r.IntN(len(evs) - 2)
		e1, e2 := evs[i], evs[i+1+r.IntN(2)]
		f := r.IntN(w.n)
		if w.gor[f] == g {
			continue
		}
		return []Lit{s.Before(e1, f), s.Before(f, e2)}
	}
}
