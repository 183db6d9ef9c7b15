package predict

import "testing"

// TestPairOwners: a pair's frames of one goroutine are of use to the inner
// pairs of every other goroutine and not to that goroutine's own; frames
// of two goroutines are of use to all; a pair with no frame to none; the
// order of the variables counts. Both representations, the table of a
// few variables and the map of many, answer the same.
func TestPairOwners(t *testing.T) {
	for _, vars := range []int{8, 1 << 11} {
		s := newPairOwners(vars)
		if (s.dense != nil) != (vars == 8) {
			t.Fatalf("%d variables: table %v", vars, s.dense != nil)
		}
		s.add(1, 2, 0)
		s.add(1, 2, 0)
		s.add(3, 4, 5)
		s.add(3, 4, 6)
		s.add(3, 4, 5)
		for _, c := range []struct {
			x, y, g uint32
			want    bool
		}{
			{1, 2, 0, false}, {1, 2, 1, true}, {2, 1, 1, false},
			{3, 4, 5, true}, {3, 4, 6, true}, {3, 4, 0, true},
			{5, 6, 0, false}, {0, 0, 3, false},
		} {
			if got := s.otherThan(c.x, c.y, c.g); got != c.want {
				t.Errorf("%d variables: otherThan(%d, %d, g%d) = %v, want %v", vars, c.x, c.y, c.g, got, c.want)
			}
		}
	}
}
