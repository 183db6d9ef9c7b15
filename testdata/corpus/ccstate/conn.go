// Package ccstate is modelled on gRPC-Go's ClientConn state race
// (grpc/grpc-go#440, "Fix cc.Close() state race"): when its transport
// failed, the connection's monitor checked that the connection was not
// shut down, redialled, and then, in a later critical section, set the
// state to TransientFailure. A Close made in between is overwritten: the
// connection leaves Shutdown and goes on reconnecting, leaking its
// resources.
//
// Ground truth: a real atomicity violation on cc.state (R-W-W: the
// monitor's check and its write, interleaved by Close's write).
package ccstate

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
	if err != nil {
		cc.state = TransientFailure
	} else {
		cc.state = Ready
	}
	cc.mu.Unlock()
}

// Close shuts the connection down for good.
func (cc *ClientConn) Close() {
	cc.mu.Lock()
	cc.state = Shutdown
	cc.mu.Unlock()
}

// State returns the connectivity state.
func (cc *ClientConn) State() State {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.state
}
