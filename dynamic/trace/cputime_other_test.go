//go:build !unix

package trace_test

import "time"

// cpuTime is unknown here; the benchmarks then omit events/cpu-s.
func cpuTime() time.Duration { return 0 }
