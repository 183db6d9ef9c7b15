//go:build unix

package avrt

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// mapping is the file the events go to, grown a chunk at a time; each
// buffer is a chunk of it, mapped shared, so that what is written is in
// the file whatever becomes of the process.
type mapping struct {
	f    *os.File
	next int64 // the offset of the next chunk
	max  int64 // the file's greatest size, 0 if none (EnvLimit)
	// maxEvents is the number of events after which no chunk is added
	// (EnvLimit), 0 if none.
	maxEvents uint64
	head      []byte // the header, mapped
}

func openMapping(name string) (*mapping, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(Header()); err != nil {
		f.Close()
		return nil, err
	}
	return &mapping{f: f, next: HeaderBytes}, nil
}

// entered maps the header's slots of Enter.
func (m *mapping) entered() ([]uint32, error) {
	b, err := syscall.Mmap(int(m.f.Fd()), 0, HeaderBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	m.head = b
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[EnteredOffset])), MaxEntered), nil
}

// chunk maps a new chunk; the caller holds slow. It returns why it
// cannot (CutLimit, CutDiskFull), 0 if it can.
func (m *mapping) chunk() ([]Event, byte) {
	off := m.next
	if m.maxEvents > 0 && seq.Load() >= m.maxEvents || m.max > 0 && off+int64(ChunkBytes) > m.max {
		return nil, CutLimit
	}
	if err := grow(m.f, off, int64(ChunkBytes)); err != nil {
		return nil, CutDiskFull
	}
	b, err := syscall.Mmap(int(m.f.Fd()), off, ChunkBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, CutDiskFull
	}
	m.next += int64(ChunkBytes)
	return unsafe.Slice((*Event)(unsafe.Pointer(&b[0])), ChunkEvents), 0
}

// cut writes into the header that the recording stopped after event seq,
// and why.
func (m *mapping) cut(seq uint64, why byte) {
	*(*uint64)(unsafe.Pointer(&m.head[CutOffset])) = seq
	m.head[CutOffset+8] = why
}

// release unmaps a chunk no one writes any more; its events stay in the
// file.
func (m *mapping) release(c []Event) {
	if c == nil {
		return
	}
	_ = syscall.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), ChunkBytes))
}

func maxProcs() int {
	if n := runtime.GOMAXPROCS(0); n > runtime.NumCPU() {
		return n
	}
	return runtime.NumCPU()
}
