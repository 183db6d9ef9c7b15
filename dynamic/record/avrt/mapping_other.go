//go:build !unix

package avrt

import (
	"errors"
	"runtime"
)

type mapping struct{}

func openMapping(string) (*mapping, error) {
	return nil, errors.New("the instrumenting recorder needs a Unix system (mmap)")
}

func (*mapping) entered() ([]uint32, error) { return nil, errors.New("no mapping") }
func (*mapping) chunk() ([]Event, error)    { return nil, errors.New("no mapping") }
func (*mapping) release([]Event)            {}

func maxProcs() int { return runtime.GOMAXPROCS(0) }
