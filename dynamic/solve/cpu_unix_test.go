//go:build unix

package solve

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used so far: on a shared
// machine it says more about an engine's cost than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
