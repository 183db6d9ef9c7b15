// Package pickerstate is modelled on gRPC-Go's picker and connectivity
// state published in two steps (grpc/grpc-go#2431, "client: in
// UpdateBalancerState, update picker before connectivity state"): when the
// balancer reported a new state and picker, the ClientConn stored the
// state with one call and the picker with another. An RPC that starts in
// between sees the connection Ready but picks with the old picker, which
// has no subchannel, and fails.
//
// Ground truth: a real atomicity violation on the pair cc.csMgr.state and
// cc.blockingPicker.picker (the update's two writes, interleaved by an
// RPC's reads of both).
package pickerstate

import (
	"errors"
	"sync"
)

// ErrNoSubConnAvailable is returned by a picker with no ready subchannel.
var ErrNoSubConnAvailable = errors.New("pickerstate: no SubConn is available")

// ErrNotReady is returned by an RPC on a connection that is not ready.
var ErrNotReady = errors.New("pickerstate: connection not ready")

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

type connectivityStateManager struct {
	mu    sync.Mutex
	state State
}

func (m *connectivityStateManager) updateState(s State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = s
}

func (m *connectivityStateManager) getState() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

type pickerWrapper struct {
	mu     sync.Mutex
	picker *Picker
}

func (pw *pickerWrapper) updatePicker(p *Picker) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.picker = p
}

func (pw *pickerWrapper) getPicker() *Picker {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.picker
}

// ClientConn is a client connection.
type ClientConn struct {
	csMgr          connectivityStateManager
	blockingPicker pickerWrapper
}

// New returns a connecting ClientConn with a picker that picks nothing.
func New() *ClientConn {
	cc := &ClientConn{}
	cc.csMgr.state = Connecting
	cc.blockingPicker.picker = NewPicker()
	return cc
}

// UpdateBalancerState is how the balancer reports its state and picker:
// meant as one update.
func (cc *ClientConn) UpdateBalancerState(s State, p *Picker) {
	cc.csMgr.updateState(s)
	cc.blockingPicker.updatePicker(p)
}

// Invoke starts an RPC and returns the address it is sent to.
func (cc *ClientConn) Invoke() (string, error) {
	if cc.csMgr.getState() != Ready {
		return "", ErrNotReady
	}
	return cc.blockingPicker.getPicker().Pick()
}
