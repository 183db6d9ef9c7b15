//go:build unix

package record

import "syscall"

// freeBytes returns the space free to an unprivileged user in the file
// system of dir.
func freeBytes(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true //nolint:unconvert // Bsize is not an int64 on every system
}
