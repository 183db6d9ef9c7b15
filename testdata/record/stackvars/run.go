// Package stackvars runs jobs one goroutine each, and each job catches
// its panic in a variable of its own that a deferred closure writes. A
// goroutine's stack is given to the next goroutine once it ends, so the
// jobs' variables share their addresses: the instrumenting recorder
// does not record the accesses of a goroutine's own stack, and nothing
// is reported.
package stackvars

import "sync/atomic"

var failures atomic.Int32

// run runs job and counts its failures.
func run(job func() error) error {
	var caught any
	err := func() error {
		defer func() {
			caught = recover()
		}()
		return job()
	}()
	if err != nil || caught != nil {
		failures.Add(1)
	}
	return err
}

// Start runs job in a goroutine of its own.
func Start(job func() error) { go run(job) }

// Buf is a small buffer that Reset empties.
type Buf struct {
	begin, end int
}

// Reset empties the buffer.
func (b *Buf) Reset() {
	b.begin = 0
	b.end = 0
}

// newBuf returns an empty Buf, made in its result: on its goroutine's
// stack, where an ended goroutine's Buf may have been.
func newBuf() (b Buf) {
	b.Reset()
	return
}

// StartBuf makes a Buf in a goroutine of its own.
func StartBuf() { go func() { _ = newBuf() }() }
