// Package sendclosedfix is package sendclosed fixed: Write holds the
// transport's lock from its check of the stream's state through its send,
// and WriteStatus closes the channel under the same lock, so no close can
// come between a check and its send. (gRPC-Go fixed it in its own ways:
// grpc/grpc-go#1687, then grpc/grpc-go#2695, which stopped closing the
// channel.) The channel is buffered, and a full buffer is an error rather
// than a blocking send under the lock.
//
// Ground truth: no atomicity violation.
package sendclosedfix

import (
	"errors"
	"sync"
)

// ErrClosed is returned by writes to a transport whose stream is done.
var ErrClosed = errors.New("sendclosedfix: stream done")

// ErrFull is returned by writes to a transport whose buffer is full.
var ErrFull = errors.New("sendclosedfix: buffer full")

// Transport hands frames to the goroutine that writes the response.
type Transport struct {
	mu     sync.Mutex
	closed bool
	writes chan []byte
}

// New returns a transport whose channel buffers n frames.
func New(n int) *Transport {
	return &Transport{writes: make(chan []byte, n)}
}

// Write queues a data frame.
func (t *Transport) Write(b []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	select {
	case t.writes <- b:
		return nil
	default:
		return ErrFull
	}
}

// WriteStatus ends the stream: no frame may follow.
func (t *Transport) WriteStatus() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	close(t.writes)
}

// Frames returns the frames queued before the stream ended.
func (t *Transport) Frames() [][]byte {
	var fs [][]byte
	for b := range t.writes {
		fs = append(fs, b)
	}
	return fs
}
