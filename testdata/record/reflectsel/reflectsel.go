// Package reflectsel runs a loop that waits on a list of channels with
// reflect.Select, as event emitters do, and changes the list only once
// the loop took its stop message: the loop's read of the list happens
// before the change. Workers hand a counter over with reflect.Value's
// Send and Recv.
package reflectsel

import (
	"reflect"
	"sync"
)

// Group waits on its cases, the first of which stops it.
type Group struct {
	cases []reflect.SelectCase
	stop  chan struct{}
	got   int
}

// NewGroup returns a group whose only case is its stop channel.
func NewGroup() *Group {
	g := &Group{stop: make(chan struct{})}
	g.cases = []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(g.stop)}}
	return g
}

// Run waits on the cases until the stop channel's message, counting
// the others.
func (g *Group) Run(done chan<- struct{}) {
	for {
		i, _, _ := reflect.Select(g.cases)
		if i == 0 {
			break
		}
		g.got++
	}
	done <- struct{}{}
}

// Add stops the loop, then adds ch to its cases.
func (g *Group) Add(ch chan int) {
	g.stop <- struct{}{}
	g.cases = append(g.cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
}

// Counter is a count behind a mutex.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Add reads and writes the count in two critical sections.
func (c *Counter) Add(d int) {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + d
	c.mu.Unlock()
}
