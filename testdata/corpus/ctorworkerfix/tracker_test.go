package ctorworkerfix

import "testing"

func TestStart(t *testing.T) {
	done := make(chan struct{})
	tr, n := Start(done)
	<-done
	if n < 0 || n > 1 || tr.Pending() != 1 {
		t.Fatalf("saw %d, then %d", n, tr.Pending())
	}
}
