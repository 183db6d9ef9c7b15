//go:build unix

package trace_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used. The benchmarks report
// events per CPU second beside events per second because the machines
// they run on are shared: wall time there measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
