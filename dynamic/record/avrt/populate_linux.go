package avrt

import (
	"os"
	"syscall"
)

// mapPopulate has a chunk's pages made at once when it is mapped, outside
// the pinned hot path, rather than one fault at a time as the first
// events land in them.
const mapPopulate = syscall.MAP_POPULATE

// grow extends the file by a chunk at off, its blocks allocated now: a
// fault that allocates a block of a hole, in the hot path, costs more
// than the event it stores.
func grow(f *os.File, off, n int64) error {
	return syscall.Fallocate(int(f.Fd()), 0, off, n)
}
