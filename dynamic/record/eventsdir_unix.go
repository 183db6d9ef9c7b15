//go:build unix

package record

import (
	"errors"
	"syscall"
)

// processRuns reports whether a process with this id exists (a signal 0
// tells without sending one).
func processRuns(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}
