package rwlayerfix

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// recordingDriver records the layers it removes.
type recordingDriver struct {
	removed chan string
}

func (d recordingDriver) Remove(id string) error {
	d.removed <- id
	return nil
}

// TestReleaseGet releases the last reference to a layer from one
// goroutine while another gets the layer; the recorded run is serial (see
// package turn: the releaser holds the store's lock while the driver
// removes the storage, so it cannot hand the turn over there), so the
// getter finds the layer gone.
func TestReleaseGet(t *testing.T) {
	d := recordingDriver{removed: make(chan string, 1)}
	ls := New(d)
	ls.CreateRWLayer("c0-init")
	var got *MountedLayer
	var releaseErr, getErr error
	turn.Serial(
		func() { releaseErr = ls.ReleaseRWLayer("c0-init") },
		func() { got, getErr = ls.GetRWLayer("c0-init") },
	)
	if releaseErr != nil || getErr != ErrMountDoesNotExist || got != nil {
		t.Fatalf("release %v, get %v, %v; want <nil>, <nil>, %v", releaseErr, got, getErr, ErrMountDoesNotExist)
	}
	if removed := <-d.removed; removed != "c0-init" {
		t.Errorf("removed %q", removed)
	}
}
