// Package ccstatefix is package ccstate fixed as grpc/grpc-go#440 fixed
// gRPC-Go's ClientConn state race: after redialling, the monitor checks
// again, in the critical section that sets the state, that the connection
// was not shut down meanwhile. The application closes the connection and
// then reads its state for its log, two calls one after the other.
//
// Ground truth: no atomicity violation (the write re-checks the state
// under the lock).
package ccstatefix

import "sync"

// State is a connectivity state.
type State int

// The connectivity states.
const (
	Idle State = iota
	Connecting
	Ready
	TransientFailure
	Shutdown
)

// ClientConn is a client connection.
type ClientConn struct {
	mu    sync.Mutex
	state State
	dial  func() error
}

// New returns a ready connection that redials with dial.
func New(dial func() error) *ClientConn {
	return &ClientConn{state: Ready, dial: dial}
}

// ResetTransport is what the monitor runs when the transport fails.
func (cc *ClientConn) ResetTransport() {
	cc.mu.Lock()
	if cc.state == Shutdown {
		cc.mu.Unlock()
		return
	}
	cc.mu.Unlock()
	err := cc.dial()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.state == Shutdown {
		return
	}
	if err != nil {
		cc.state = TransientFailure
	} else {
		cc.state = Ready
	}
}

// Close shuts the connection down for good.
func (cc *ClientConn) Close() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.state = Shutdown
}

// State returns the connectivity state.
func (cc *ClientConn) State() State {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.state
}
