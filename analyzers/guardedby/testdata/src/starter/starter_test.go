package starter

import "testing"

// The test's access holds the lock: it counts towards the guard in the
// package's test variant, but the messages count the package's own
// accesses, so that the package and its test variant report the same
// message once.
func TestCount(t *testing.T) {
	s := new(Stream)
	s.Start()
	s.mu.Lock()
	n := len(s.requests)
	s.mu.Unlock()
	if n != 0 {
		t.Fatal(n)
	}
}
