package handover

import "testing"

// TestInOrder appends from each handler without a lock of its own: the
// mutex that the bus hands over orders them.
func TestInOrder(t *testing.T) {
	var got []int
	b := New(func(v int) {
		got = append(got, v)
	})
	for v := range 3 {
		b.Publish(v)
	}
	b.Wait()
	if len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Errorf("got %v, want [0 1 2]", got)
	}
}
