// Package acconnectfix is package acconnect fixed as grpc/grpc-go#7390
// fixed gRPC-Go's concurrent connection attempts (grpc/grpc-go#7365):
// connect moves the addrConn to Connecting in the critical section that
// finds it idle, so a second connect finds it connecting and returns.
//
// Ground truth: no atomicity violation.
package acconnectfix

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
	ac.state = Connecting
	ac.mu.Unlock()
	ac.logf("addrConn: connecting")
	ac.resetTransport()
}

// resetTransport dials; the caller has moved the addrConn to Connecting.
func (ac *AddrConn) resetTransport() {
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
