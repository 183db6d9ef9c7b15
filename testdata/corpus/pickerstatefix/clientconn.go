// Package pickerstatefix is package pickerstate fixed: the ClientConn
// publishes the state and the picker in one critical section, and an RPC
// reads both in one. (grpc/grpc-go#2431 proposed storing the picker before
// the state instead, which is enough when a reader reads the state before
// the picker.) The application starts its RPCs in a loop, each one call,
// and logs what each did.
//
// Ground truth: no atomicity violation.
package pickerstatefix

import (
	"errors"
	"sync"
)

// ErrNoSubConnAvailable is returned by a picker with no ready subchannel.
var ErrNoSubConnAvailable = errors.New("pickerstatefix: no SubConn is available")

// ErrNotReady is returned by an RPC on a connection that is not ready.
var ErrNotReady = errors.New("pickerstatefix: connection not ready")

// State is a connectivity state.
type State int

// The connectivity states.
const (
	Idle State = iota
	Connecting
	Ready
)

// Picker picks the address of an RPC.
type Picker struct {
	addrs []string
}

// NewPicker returns a picker over addrs.
func NewPicker(addrs ...string) *Picker {
	return &Picker{addrs: addrs}
}

// Pick returns the address to send an RPC to.
func (p *Picker) Pick() (string, error) {
	if len(p.addrs) == 0 {
		return "", ErrNoSubConnAvailable
	}
	return p.addrs[0], nil
}

// ClientConn is a client connection.
type ClientConn struct {
	mu     sync.Mutex
	state  State
	picker *Picker
}

// New returns a connecting ClientConn with a picker that picks nothing.
func New() *ClientConn {
	return &ClientConn{state: Connecting, picker: NewPicker()}
}

// UpdateBalancerState is how the balancer reports its state and picker.
func (cc *ClientConn) UpdateBalancerState(s State, p *Picker) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.state = s
	cc.picker = p
}

// Invoke starts an RPC and returns the address it is sent to.
func (cc *ClientConn) Invoke() (string, error) {
	cc.mu.Lock()
	s, p := cc.state, cc.picker
	cc.mu.Unlock()
	if s != Ready {
		return "", ErrNotReady
	}
	return p.Pick()
}
