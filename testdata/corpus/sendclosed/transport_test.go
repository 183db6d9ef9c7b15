package sendclosed

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestWriteThenStatus has a handler write a frame while the server ends
// the stream; the recorded run is serial (see package turn), so the frame
// is queued before the channel is closed.
func TestWriteThenStatus(t *testing.T) {
	tr := New(1)
	var err error
	turn.Serial(func() { err = tr.Write([]byte("data")) }, tr.WriteStatus)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tr.Frames()); got != 1 {
		t.Errorf("%d frames, want 1", got)
	}
}
