// Package pecan1 follows PECAN's Fig. 1 (seed 003 section 2): two shared
// variables x and y, three races, (2,5) and (2,6) on x and (3,7) on y, of
// which (3,7) matters: if T2's write of y (line 7) runs before T1's check
// (line 3), T1 reaches the error (line 4). The recorded trace
// <1,5,2,3,6,7> does not show the error; PECAN predicts the race and the
// schedule <1,5,2,6,7,3> that triggers it. The comments give the figure's
// line numbers.
//
// Ground truth: three real data races (x: 2-5, 2-6; y: 3-7), the last one
// guarding the error.
package pecan1

import "errors"

// ErrBroken is Fig. 1's ERROR.
var ErrBroken = errors.New("pecan1: y was set before x was used")

// State is the shared x and y.
type State struct {
	x, y int
}

// T1 is Fig. 1's first thread.
func (s *State) T1() error {
	s.x = 1       // 2
	if s.y == 1 { // 3
		return ErrBroken // 4
	}
	return nil
}

// T2 is Fig. 1's second thread.
func (s *State) T2() {
	s.x = 2 // 5
	_ = s.x // 6
	s.y = 1 // 7
}
