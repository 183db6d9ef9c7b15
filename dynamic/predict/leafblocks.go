package predict

// The happens-before engine keeps two arrays per clock beside its
// components (hb.go): each leaf's identity (HB.ids) and the step at which
// each leaf last changed (HB.vers, which the snapshots of clocktree.go
// read). Both are laid out in blocks of clockFan leaves, each block's
// entry first and then its leaves': the block's identity, or the last
// step of any of its leaves. A join, a copy or a search for what changed
// passes over a block in one word, and over a leaf in one.

// idBlock is the words of a block: the block's entry, then its leaves'.
// Identity 0 is the all-zero leaf, and the block of them.
const idBlock = 1 + clockFan

// leafID returns the index of leaf l's entry.
func leafID(l int) int { return l>>clockBits*idBlock + 1 + l&clockMask }

// blockID returns the index of the entry of leaf l's block.
func blockID(l int) int { return l >> clockBits * idBlock }

// growBlocks extends a block array (identities or steps) to the leaves of
// n components, the entries added zero.
func growBlocks(a []uint64, n int) []uint64 {
	leaves := (n + clockMask) >> clockBits
	want := (leaves + clockMask) >> clockBits * idBlock
	switch {
	case len(a) >= want:
	case want <= cap(a):
		old := len(a)
		a = a[:want]
		clear(a[old:])
	default:
		w := make([]uint64, want, want+want/2+idBlock)
		copy(w, a)
		a = w
	}
	return a
}

// setStep records in vers that leaf l changed at step now, and so did
// its block.
func setStep(vers []uint64, l int, now uint64) {
	vers[leafID(l)] = now
	vers[blockID(l)] = now
}
