package checkset

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestClaim has two goroutines claim the resource, each handing the turn
// to the other while it prepares (see package turn): both see no owner,
// and both claim.
func TestClaim(t *testing.T) {
	s := turn.New(2)
	r := &Resource{Prepare: func(id int) { s.Yield(id - 1) }}
	var claimed [2]bool
	s.Run(func(g int) { claimed[g] = r.Claim(g + 1) }, 0, 1, 0, 1)
	if claimed[0] && claimed[1] {
		t.Logf("both claimed; owner %d", r.Owner())
	}
}
