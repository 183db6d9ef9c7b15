//go:build !unix

package avrt

import (
	"errors"
	"runtime"
)

type mapping struct {
	max       int64
	maxEvents uint64
}

func openMapping(string) (*mapping, error) {
	return nil, errors.New("the instrumenting recorder needs a Unix system (mmap)")
}

func (*mapping) entered() ([]uint32, error) { return nil, errors.New("no mapping") }
func (*mapping) chunk() ([]Event, byte)     { return nil, CutDiskFull }
func (*mapping) cut(uint64, byte)           {}
func (*mapping) release([]Event)            {}

func maxProcs() int { return runtime.GOMAXPROCS(0) }
