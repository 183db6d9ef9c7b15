// Package copies copies into and out of a buffer that a mutex guards:
// each copy reads the elements of its source and writes those of its
// destination, as many as the shorter of the two has, and no more than
// the recorders record of one copy.
package copies

import "sync"

type Buf struct {
	mu   sync.Mutex
	data []int
	big  []byte
	name string
}

func (b *Buf) SetFirst(x int) {
	b.mu.Lock()
	b.data[0] = x
	b.mu.Unlock()
}

func (b *Buf) Snapshot() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]int, 2)
	copy(out, b.data)
	return out
}

func (b *Buf) SetTail(v []int) {
	b.mu.Lock()
	copy(b.data[1:], v)
	b.mu.Unlock()
}

func (b *Buf) Fill(src []byte) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return copy(b.big, src)
}

func (b *Buf) Name() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]byte, 3)
	copy(out, b.name)
	return out
}

func (b *Buf) Next() []int { return b.data }

func (b *Buf) Rotate() {
	b.mu.Lock()
	defer b.mu.Unlock()
	copy(b.Next(), b.data[1:])
}

// Bytes is a named slice type, which copy takes as it takes []byte.
type Bytes []byte

// Put names a parameter len, as some code does.
func (b *Buf) Put(data Bytes, len int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return copy(b.big[len:], data)
}

func (b *Buf) PutName() {
	b.mu.Lock()
	copy(b.big, b.name)
	b.mu.Unlock()
}
