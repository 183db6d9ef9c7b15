package predict

import "slices"

// This file keeps the pattern search's vector-clock snapshots (pattern.go,
// patIndex) as persistent trees that share what they have in common.
//
// A snapshot is a goroutine's clock at an access after it learned
// something, and a clock is as wide as the goroutines seen so far. Kept
// flat, the snapshots took snapshots times goroutines words: on a test
// run that starts thousands of short-lived goroutines (alitto/pond's
// tests, 3,255 goroutines and 109,536 snapshots in 981K events) that was
// 160M words, 640 MB live and 2.9 GB allocated while the trace is read.
// Yet one snapshot of a goroutine differs from its previous one (or a new
// goroutine's first from its parent's) in a few components: its own, and
// those of the goroutines it has just heard from. So a snapshot is a
// tree of clockFan-wide nodes over the components, and a new one copies
// only the paths to the leaves that changed (path copying, as in
// persistent arrays and hash array mapped tries), sharing every other
// node with the snapshot it was made from. Memory grows with the
// components that change, height times clockFan words each, not with
// the goroutines; a lookup is one load per level, and the height is 1
// up to clockFan goroutines, 2 up to clockFan squared.

const (
	clockBits = 4
	clockFan  = 1 << clockBits // slots of a node
	clockMask = clockFan - 1
)

// clockTree holds the nodes of every snapshot of an index. A node is
// clockFan consecutive words: an internal node's are the numbers of its
// children, a leaf's are clock components. Node 0 is all zeros, and
// stands for an all-zero subtree at any level.
//
// The nodes are kept in chunks of chunkNodes (node n is in chunk
// n>>chunkBits), not in one array: one array doubles when it is full,
// so that up to half of it is unused, and the array it replaces stays
// until the next collection (while a trace is read the collector is
// off, cmd/avcheck), up to twice the nodes' memory again. On a worker
// pool's test run (18.9M events, 89,387 goroutines, 12.7M nodes) the
// array was 1.07 GB for 0.81 GB of nodes. Only the first chunk grows,
// by doubling, so that a short trace's tree stays small.
type clockTree struct {
	chunks [][]uint32
	n      uint32 // the nodes, node 0 included
}

const (
	chunkBits  = 13 // a chunk is 1<<chunkBits nodes, 512 KB
	chunkNodes = 1 << chunkBits
	chunkMask  = chunkNodes - 1
)

// node returns the words of node n.
func (t *clockTree) node(n uint32) []uint32 {
	at := int(n&chunkMask) << clockBits
	return t.chunks[n>>chunkBits][at : at+clockFan : at+clockFan]
}

// clockRef is a snapshot: the root of its tree and the tree's height (1
// for a single leaf), which covers components 0 to clockFan^h-1; the
// components beyond are zero. The zero clockRef is the zero clock.
type clockRef struct {
	root, h uint32
}

func newClockTree() clockTree {
	return clockTree{chunks: [][]uint32{make([]uint32, clockFan, 16*clockFan)}, n: 1}
}

// get returns component gi of the snapshot r.
func (t *clockTree) get(r clockRef, gi uint32) uint32 {
	if gi>>(clockBits*r.h) != 0 { // a shift by 32 or more gives 0
		return 0
	}
	n := r.root
	for l := r.h; l > 1; l-- {
		n = t.chunks[n>>chunkBits][int(n&chunkMask)<<clockBits|int(gi>>(clockBits*(l-1)))&clockMask]
	}
	return t.chunks[n>>chunkBits][int(n&chunkMask)<<clockBits|int(gi)&clockMask]
}

// heightFor returns the height of a tree that covers n components.
func heightFor(n int) uint32 {
	h := uint32(1)
	for c := clockFan; c < n; c <<= clockBits {
		h++
	}
	return h
}

// nodeCount returns the number of nodes the tree holds, the zero node
// included: its memory is nodeCount times clockFan words.
func (t *clockTree) nodeCount() int { return int(t.n) }

// snapshot returns a snapshot of the clock vc (components past its end
// are zero) that shares with base every node whose components vc has
// the same. The cost in memory is the nodes on the paths to the leaves
// that differ from base's; the cost in time is one comparison per
// component of vc.
func (t *clockTree) snapshot(base clockRef, vc []uint32) clockRef {
	return t.snapshotSince(base, vc, nil, 0)
}

// snapshotSince is snapshot for a clock vc that differs from base, a
// snapshot of it taken at step since, only in the leaves whose step in
// vers (HB.Leaves) is after since: it compares those leaves alone, not
// every component, which on a run of thousands of goroutines made the
// snapshots' cost grow with their square. With vers nil, it compares
// every leaf, as snapshot.
func (t *clockTree) snapshotSince(base clockRef, vc []uint32, vers []uint64, since uint64) clockRef {
	h := max(heightFor(len(vc)), base.h)
	root := base.root
	if base.h == 0 {
		root = 0
	}
	// Raise base to height h: its tree becomes the first child of each
	// new level, whose other children are zero.
	for l := max(base.h, 1); l < h; l++ {
		if root != 0 {
			root = t.newNode()
			t.node(root)[0] = base.root
			base.root = root
		}
	}
	return clockRef{root: t.build(root, h, 0, vc, vers, since), h: h}
}

// build returns the node at height h, covering components from lo, that
// holds vc's components there, reusing node n (which covers the same
// components) if they are the same, and any of its children that are. A
// subtree none of whose leaves changed after since (vers, if not nil) is
// n, as it is.
func (t *clockTree) build(n, h uint32, lo int, vc []uint32, vers []uint64, since uint64) uint32 {
	if lo >= len(vc) {
		return 0
	}
	span := 1 << (clockBits * (h - 1)) // components under each child
	if vers != nil && !changedSince(vers, lo>>clockBits, span, since) {
		return n
	}
	if h == 1 {
		seg := vc[lo:min(lo+clockFan, len(vc))]
		if equalPadded(t.node(n), seg) {
			return n
		}
		if allZero(seg) {
			return 0
		}
		m := t.newNode()
		copy(t.node(m), seg)
		return m
	}
	var kids [clockFan]uint32
	same, zero := true, true
	for c := range clockFan {
		old := t.node(n)[c]
		k := t.build(old, h-1, lo+c*span, vc, vers, since)
		kids[c] = k
		same = same && k == old
		zero = zero && k == 0
	}
	switch {
	case same:
		return n
	case zero:
		return 0
	}
	m := t.newNode()
	copy(t.node(m), kids[:])
	return m
}

// changedSince reports whether a leaf of a node changed after step
// since: the node covers span leaves from leaf first, and vers holds the
// leaves' steps in blocks (HB.Leaves, leafblocks.go). A node of a block
// or more reads the blocks' steps alone.
func changedSince(vers []uint64, first, span int, since uint64) bool {
	if span == 1 {
		at := leafID(first)
		return at < len(vers) && vers[at] > since
	}
	for at := blockID(first); at < min(blockID(first+span-1)+1, len(vers)); at += idBlock {
		if vers[at] > since {
			return true
		}
	}
	return false
}

// joinInto sets *vc to the pointwise maximum of *vc and the snapshot r,
// growing *vc as far as r has components that are not zero.
func (t *clockTree) joinInto(vc *VC, r clockRef) {
	if r.h != 0 {
		t.joinNode(vc, r.root, r.h, 0)
	}
}

func (t *clockTree) joinNode(vc *VC, n, h uint32, lo int) {
	if n == 0 {
		return
	}
	node := t.node(n)
	if h == 1 {
		for c, v := range node {
			if v == 0 {
				continue
			}
			if lo+c >= len(*vc) {
				vc.grow(lo + c + 1)
			}
			if v > (*vc)[lo+c] {
				(*vc)[lo+c] = v
			}
		}
		return
	}
	span := 1 << (clockBits * (h - 1))
	for c, k := range node {
		t.joinNode(vc, k, h-1, lo+c*span)
	}
}

// newNode adds an all-zero node and returns its number.
func (t *clockTree) newNode() uint32 {
	m := t.n
	c, at := int(m>>chunkBits), int(m&chunkMask)<<clockBits
	if c == len(t.chunks) {
		t.chunks = append(t.chunks, make([]uint32, 0, chunkNodes<<clockBits))
	}
	ch := t.chunks[c]
	if at+clockFan > cap(ch) { // the first chunk, growing
		grown := make([]uint32, at, min(2*cap(ch), chunkNodes<<clockBits))
		copy(grown, ch)
		ch = grown
	}
	// A chunk's words past its length are zero: make clears them, and
	// nothing writes there before it is a node.
	t.chunks[c] = ch[:at+clockFan]
	t.n++
	return m
}

// equalPadded reports whether node holds seg followed by zeros.
func equalPadded(node, seg []uint32) bool {
	return slices.Equal(node[:len(seg)], seg) && allZero(node[len(seg):])
}

func allZero(s []uint32) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}
