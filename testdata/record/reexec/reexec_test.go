package reexec

import (
	"os"
	"os/exec"
	"sync"
	"testing"
)

// TestChildren runs two copies of the test binary, each counting in
// goroutines of its own, then counts in its own goroutines.
func TestChildren(t *testing.T) {
	if os.Getenv("REEXEC_CHILD") != "" {
		count(100)
		return
	}
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildren$")
		cmd.Env = append(os.Environ(), "REEXEC_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
	}
	if n := count(2); n != 4 {
		t.Fatalf("count %d, want 4", n)
	}
}

// count adds 1 to a counter rounds times from each of two goroutines.
func count(rounds int) int {
	var c Counter
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				c.Add(1)
			}
		}()
	}
	wg.Wait()
	return c.n
}
