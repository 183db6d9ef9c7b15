package escrangefix

import (
	"sync"
	"testing"
)

func TestNotify(t *testing.T) {
	var mu sync.Mutex
	var got []string
	Notify([]Item{{Name: "a"}}, func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	})
	if len(got) != 1 {
		t.Fatalf("logged %v, want one name", got)
	}
}
