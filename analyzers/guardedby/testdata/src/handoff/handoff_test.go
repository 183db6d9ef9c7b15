package handoff

import "testing"

// A test reads state where it knows it is quiet: not reported, although
// the field's guard is inferred from the package's accesses.
func TestState(t *testing.T) {
	c := Started()
	c.Wait()
	if c.state != 1 {
		t.Fatal(c.state)
	}
}

func TestStateOf(t *testing.T) {
	if Started().stateOf() > 1 {
		t.Fatal("state")
	}
}
