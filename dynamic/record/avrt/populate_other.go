//go:build unix && !linux

package avrt

import "os"

const mapPopulate = 0

func grow(f *os.File, off, n int64) error { return f.Truncate(off + n) }
