package rwlayer

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// yieldingDriver removes nothing; it hands the turn over while it
// "removes" a layer (see package turn).
type yieldingDriver struct {
	s       *turn.Sched
	removed chan string
}

func (d yieldingDriver) Remove(id string) error {
	d.removed <- id
	d.s.Yield(0)
	return nil
}

// TestReleaseGet releases the last reference to a layer from one
// goroutine while another gets the layer, the releaser handing the turn
// over while the driver removes the layer's storage: the getter finds
// the layer and takes a reference to it, and the releaser then deletes
// it.
func TestReleaseGet(t *testing.T) {
	s := turn.New(2)
	d := yieldingDriver{s: s, removed: make(chan string, 1)}
	ls := New(d)
	ls.CreateRWLayer("c0-init")
	var got *MountedLayer
	var releaseErr, getErr error
	s.Run(func(g int) {
		if g == 0 {
			releaseErr = ls.ReleaseRWLayer("c0-init")
		} else {
			got, getErr = ls.GetRWLayer("c0-init")
		}
	}, 0, 1, 0)
	if releaseErr != nil || getErr != nil || got == nil {
		t.Fatalf("release %v, get %v, %v", releaseErr, got, getErr)
	}
	if removed := <-d.removed; removed != "c0-init" {
		t.Errorf("removed %q", removed)
	}
}
