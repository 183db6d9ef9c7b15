package reflectsel

import (
	"reflect"
	"testing"
)

// TestAddStops changes the cases once the loop stopped.
func TestAddStops(t *testing.T) {
	g := NewGroup()
	done := make(chan struct{})
	go g.Run(done)
	g.Add(make(chan int))
	<-done
	if len(g.cases) != 2 {
		t.Errorf("%d cases, want 2", len(g.cases))
	}
}

// TestValueHandOver adds on either side of messages that reflect.Value's
// Send, Recv, Close and TryRecv pass.
func TestValueHandOver(t *testing.T) {
	var c Counter
	ch := reflect.ValueOf(make(chan int))
	back := reflect.ValueOf(make(chan int, 1))
	fin := reflect.ValueOf(make(chan struct{}))
	go func() {
		c.Add(1)
		ch.Send(reflect.ValueOf(1))
		x, _ := back.Recv()
		c.Add(int(x.Int()))
		fin.Close()
	}()
	ch.Recv()
	c.Add(2)
	back.Send(reflect.ValueOf(3))
	for {
		if x, _ := fin.TryRecv(); x.IsValid() {
			break
		}
	}
	if c.n != 6 {
		t.Errorf("count %d, want 6", c.n)
	}
}
