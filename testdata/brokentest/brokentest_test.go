package brokentest

import "testing"

func TestValue(t *testing.T) {
	if Value() != 1 {
		t.Fatal("Value is not 1")
	}
}
