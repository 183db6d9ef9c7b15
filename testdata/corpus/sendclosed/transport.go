// Package sendclosed is modelled on gRPC-Go's "send on closed channel"
// panic in its ServeHTTP transport (grpc/grpc-go#1111, and etcd-io/etcd#8904
// fixed by grpc/grpc-go#1687): Write checked that the stream was not done
// and then handed its frame to the stream's writer goroutine through a
// channel, while WriteStatus marked the stream done and closed that
// channel. A WriteStatus between Write's check and its send closes the
// channel under it, and the send panics.
//
// Ground truth: a real atomicity violation (Write's check of t.closed
// and its send on t.writes, interleaved by WriteStatus's write of
// t.closed and its close of t.writes).
package sendclosed

import (
	"errors"
	"sync"
)

// ErrClosed is returned by writes to a transport whose stream is done.
var ErrClosed = errors.New("sendclosed: stream done")

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
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return ErrClosed
	}
	t.writes <- b
	return nil
}

// WriteStatus ends the stream: no frame may follow.
func (t *Transport) WriteStatus() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.mu.Unlock()
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
