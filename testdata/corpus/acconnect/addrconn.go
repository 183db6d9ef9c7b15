// Package acconnect is modelled on gRPC-Go's concurrent connection
// attempts (grpc/grpc-go#7365, fixed by grpc/grpc-go#7390): connect
// checked under the addrConn's lock that it was idle, released the lock,
// and called resetTransport, which took the lock again to move to
// Connecting and dial. Two connects in that window both find it idle and
// both dial; the second transport replaces the first, which is orphaned
// with its resources.
//
// Ground truth: a real atomicity violation on ac.state (R-W-W: one
// connect's check and its move to Connecting, interleaved by the other
// connect's), and the orphaned transport it causes (ac.transport written
// twice).
package acconnect

import "sync"

// State is a connectivity state.
type State int

// The connectivity states.
const (
	Idle State = iota
	Connecting
	Ready
)

// Transport is a connected transport.
type Transport struct {
	Addr string
}

// AddrConn is a connection to one address.
type AddrConn struct {
	mu        sync.Mutex
	state     State
	transport *Transport
	dial      func() *Transport
	logf      func(format string, args ...any)
}

// New returns an idle addrConn that dials with dial and logs with logf.
func New(dial func() *Transport, logf func(format string, args ...any)) *AddrConn {
	return &AddrConn{dial: dial, logf: logf}
}

// Connect starts connecting if the addrConn is idle.
func (ac *AddrConn) Connect() {
	ac.mu.Lock()
	if ac.state != Idle {
		ac.mu.Unlock()
		return
	}
	ac.mu.Unlock()
	ac.logf("addrConn: connecting")
	ac.resetTransport()
}

func (ac *AddrConn) resetTransport() {
	ac.mu.Lock()
	ac.state = Connecting
	ac.mu.Unlock()
	t := ac.dial()
	ac.mu.Lock()
	ac.transport = t
	ac.state = Ready
	ac.mu.Unlock()
}

// Transport returns the current transport.
func (ac *AddrConn) Transport() *Transport {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	return ac.transport
}
