package leaserenew

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestRenewRevoke has a client renew a lease while the lease is revoked;
// the recorded run is serial (see package turn), so the renewal comes
// first and succeeds.
func TestRenewRevoke(t *testing.T) {
	le := New(func() int64 { return 100 }, func(int64) {})
	le.Grant(1, 10)
	var ttl int64
	var renewErr, revokeErr error
	turn.Serial(
		func() { ttl, renewErr = le.Renew(1) },
		func() { revokeErr = le.Revoke(1) },
	)
	if ttl != 10 || renewErr != nil || revokeErr != nil {
		t.Errorf("renew %d, %v; revoke %v; want 10, <nil>; <nil>", ttl, renewErr, revokeErr)
	}
}
