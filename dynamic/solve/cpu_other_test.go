//go:build !unix

package solve

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
