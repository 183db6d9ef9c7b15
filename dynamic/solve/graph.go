package solve

import (
	"container/heap"
	"slices"
	"time"

	"github.com/go-air/gini/z"
)

// closure is the transitive closure of an acyclic graph, one bit row per
// node.
type closure struct {
	words int
	bits  []uint64
}

func (c *closure) reaches(a, b int) bool {
	return c.bits[a*c.words+b/64]&(1<<(b%64)) != 0
}

// newClosure computes the transitive closure of the graph succ over n
// nodes; it reports false when the graph has a cycle.
func newClosure(n int, succ [][]int32) (*closure, bool) {
	topo, ok := topoSort(n, succ)
	if !ok {
		return nil, false
	}
	if n > closureLimit {
		return nil, true
	}
	w := (n + 63) / 64
	c := &closure{words: w, bits: make([]uint64, n*w)}
	for i := n - 1; i >= 0; i-- {
		u := topo[i]
		row := c.bits[u*w : (u+1)*w]
		for _, v := range succ[u] {
			row[v/64] |= 1 << (v % 64)
			for k, x := range c.bits[int(v)*w : (int(v)+1)*w] {
				row[k] |= x
			}
		}
	}
	return c, true
}

// topoSort returns the nodes in a topological order of succ, the smallest
// ready node first, or false when succ has a cycle.
func topoSort(n int, succ [][]int32) ([]int, bool) {
	indeg := make([]int32, n)
	for _, vs := range succ {
		for _, v := range vs {
			indeg[v]++
		}
	}
	ready := make(intHeap, 0, n)
	for u := range n {
		if indeg[u] == 0 {
			ready = append(ready, u)
		}
	}
	heap.Init(&ready)
	out := make([]int, 0, n)
	for ready.Len() > 0 {
		u := heap.Pop(&ready).(int)
		out = append(out, u)
		for _, v := range succ[u] {
			if indeg[v]--; indeg[v] == 0 {
				heap.Push(&ready, int(v))
			}
		}
	}
	return out, len(out) == n
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// arc is an edge of the round's graph: lit is the chosen atom literal that
// put it there, or z.LitNull for a fixed edge.
type arc struct {
	to  int32
	lit z.Lit
}

// cycleFinder examines one model: it either orders the events or returns
// the clauses that block the cycles it found. Its buffers live across
// rounds.
type cycleFinder struct {
	adj   [][]arc
	indeg []int32

	// Tarjan's strongly connected components.
	index, low, comp []int32
	onStack          []bool
	stack            []int32

	// 0-1 breadth-first search.
	dist    []int32
	parent  []int32
	viaLit  []z.Lit
	deque   []int32
	touched []int32

	// inAtoms[v] lists the chosen atom edges u->v, with to = u.
	inAtoms [][]arc
}

// find builds the graph of the fixed edges and the chosen atom literals.
// When the graph is acyclic it returns a topological order. Otherwise it
// returns, for every chosen atom u->v that lies on a cycle, the clause that
// forbids the shortest such cycle (fewest atoms; fixed paths are free, since
// they hold in every order): the disjunction of the negated atoms along it.
//
// A non-zero deadline bounds the search for cycles; past it, find returns
// what it has, and expired.
func (f *cycleFinder) find(s *lazy, chosen []z.Lit, deadline time.Time) (order []int, clauses [][]z.Lit, expired bool) {
	n := s.n
	if len(f.adj) != n {
		f.adj = make([][]arc, n)
		f.indeg = make([]int32, n)
		f.index = make([]int32, n)
		f.low = make([]int32, n)
		f.comp = make([]int32, n)
		f.onStack = make([]bool, n)
		f.dist = make([]int32, n)
		f.parent = make([]int32, n)
		f.viaLit = make([]z.Lit, n)
		f.inAtoms = make([][]arc, n)
		for i := range f.dist {
			f.dist[i] = -1
		}
	}
	for u := range f.adj {
		f.adj[u] = f.adj[u][:0]
		f.inAtoms[u] = f.inAtoms[u][:0]
		f.indeg[u] = 0
	}
	for u, vs := range s.fixed {
		for _, v := range vs {
			f.adj[u] = append(f.adj[u], arc{v, z.LitNull})
			f.indeg[v]++
		}
	}
	for _, m := range chosen {
		v := m.Var()
		p := s.atomOf[v]
		if m.IsPos() {
			f.adj[p.a] = append(f.adj[p.a], arc{p.b, v.Pos()})
			f.inAtoms[p.b] = append(f.inAtoms[p.b], arc{p.a, v.Pos()})
			f.indeg[p.b]++
		} else {
			f.adj[p.b] = append(f.adj[p.b], arc{p.a, v.Neg()})
			f.inAtoms[p.a] = append(f.inAtoms[p.a], arc{p.b, v.Neg()})
			f.indeg[p.a]++
		}
	}

	// Kahn's algorithm, smallest ready event first so that the order stays
	// close to the recorded one where the constraints allow.
	ready := make(intHeap, 0, n)
	for u := range n {
		if f.indeg[u] == 0 {
			ready = append(ready, u)
		}
	}
	heap.Init(&ready)
	order = make([]int, 0, n)
	for ready.Len() > 0 {
		u := heap.Pop(&ready).(int)
		order = append(order, u)
		for _, a := range f.adj[u] {
			if f.indeg[a.to]--; f.indeg[a.to] == 0 {
				heap.Push(&ready, int(a.to))
			}
		}
	}
	if len(order) == n {
		return order, nil, false
	}

	// Every cycle lies among the events Kahn could not place (indeg > 0).
	f.sccs(n)
	seen := make(map[string]struct{})
	var key []byte
	for v := range n {
		if f.indeg[v] == 0 {
			continue
		}
		// The atoms u->v with u in v's component each lie on a cycle;
		// one search from v finds the shortest way back to all of them.
		ins := f.inAtoms[v][:0]
		for _, in := range f.inAtoms[v] {
			if f.indeg[in.to] != 0 && f.comp[in.to] == f.comp[v] {
				ins = append(ins, in)
			}
		}
		if len(ins) == 0 {
			continue
		}
		if !deadline.IsZero() && time.Now().After(deadline) || stopped(s.budget.Stop) {
			return nil, clauses, true
		}
		f.search(int32(v))
		for _, in := range ins {
			u := in.to
			if f.dist[u] < 0 {
				continue // cannot happen within a component; be safe
			}
			clause := []z.Lit{in.lit.Not()}
			for x := u; x != int32(v); x = f.parent[x] {
				if m := f.viaLit[x]; m != z.LitNull {
					clause = append(clause, m.Not())
				}
			}
			slices.Sort(clause)
			key = key[:0]
			for _, m := range clause {
				key = append(key, byte(m), byte(m>>8), byte(m>>16), byte(m>>24))
			}
			if _, dup := seen[string(key)]; dup {
				continue
			}
			seen[string(key)] = struct{}{}
			clauses = append(clauses, clause)
		}
		f.clearSearch()
	}
	return nil, clauses, false
}

// sccs labels with Tarjan's algorithm the strongly connected components of
// the graph restricted to the events Kahn left unplaced (indeg > 0), which
// contain every cycle. It is iterative: windows can be long chains.
func (f *cycleFinder) sccs(n int) {
	for i := range n {
		f.index[i] = -1
		f.onStack[i] = false
	}
	type frame struct{ v, next int32 }
	var call []frame
	var counter, ncomp int32
	for root := range n {
		if f.indeg[root] == 0 || f.index[root] >= 0 {
			continue
		}
		call = append(call[:0], frame{int32(root), 0})
		f.index[root], f.low[root] = counter, counter
		counter++
		f.stack = append(f.stack[:0], int32(root))
		f.onStack[root] = true
		for len(call) > 0 {
			top := &call[len(call)-1]
			v := top.v
			if int(top.next) < len(f.adj[v]) {
				w := f.adj[v][top.next].to
				top.next++
				if f.indeg[w] == 0 {
					continue
				}
				if f.index[w] < 0 {
					f.index[w], f.low[w] = counter, counter
					counter++
					f.stack = append(f.stack, w)
					f.onStack[w] = true
					call = append(call, frame{w, 0})
				} else if f.onStack[w] && f.index[w] < f.low[v] {
					f.low[v] = f.index[w]
				}
				continue
			}
			if f.low[v] == f.index[v] {
				for {
					w := f.stack[len(f.stack)-1]
					f.stack = f.stack[:len(f.stack)-1]
					f.onStack[w] = false
					f.comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				if p := call[len(call)-1].v; f.low[v] < f.low[p] {
					f.low[p] = f.low[v]
				}
			}
		}
	}
}

// search is a 0-1 breadth-first search from src within src's component:
// fixed edges cost nothing and atom edges cost one, so dist counts the atoms
// on a path and parent/viaLit record a path with the fewest.
func (f *cycleFinder) search(src int32) {
	c := f.comp[src]
	f.deque = f.deque[:0]
	head := 0
	// The deque is a slice with a moving head; 0-cost arcs are pushed to
	// the front by reusing the slot before head when there is one.
	f.deque = append(f.deque, src)
	f.dist[src] = 0
	f.parent[src] = -1
	f.viaLit[src] = z.LitNull
	f.touched = append(f.touched[:0], src)
	for head < len(f.deque) {
		v := f.deque[head]
		head++
		for _, a := range f.adj[v] {
			w := a.to
			if f.indeg[w] == 0 || f.comp[w] != c {
				continue
			}
			d := f.dist[v]
			if a.lit != z.LitNull {
				d++
			}
			if f.dist[w] >= 0 && f.dist[w] <= d {
				continue
			}
			if f.dist[w] < 0 {
				f.touched = append(f.touched, w)
			}
			f.dist[w] = d
			f.parent[w] = v
			f.viaLit[w] = a.lit
			if a.lit == z.LitNull && head > 0 {
				head--
				f.deque[head] = w
			} else {
				f.deque = append(f.deque, w)
			}
		}
	}
}

func (f *cycleFinder) clearSearch() {
	for _, v := range f.touched {
		f.dist[v] = -1
	}
}
