//go:build unix

package solve

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCrossCheckExternal compares the default engine with each external
// solver on PATH over random window-like instances: the same answers, and
// orders that satisfy the constraints.
func TestCrossCheckExternal(t *testing.T) {
	var ext []engine
	for _, name := range []string{"z3", "cvc5"} {
		if e, ok := externalEngine(t, name); ok {
			ext = append(ext, e)
		}
	}
	if len(ext) == 0 {
		t.Skip("neither z3 nor cvc5 is on PATH (Debian packages z3, cvc5): nothing to cross-check the default engine against")
	}
	for _, e := range ext {
		t.Run(e.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			var count [3]int
			for i := range 25 {
				n := 20 + r.IntN(60)
				w := randomWindow(r, n, 2+r.IntN(3), 1+r.IntN(2), 2+r.IntN(3))
				g := record(New(n, Budget{}), n)
				x := record(e.new(t, n, Budget{Time: time.Minute}), n)
				w.encode(g)
				w.encode(x)
				for range 3 {
					seed := r.Uint64()
					ag := w.candidate(rand.New(rand.NewPCG(seed, 0)), g)
					ax := w.candidate(rand.New(rand.NewPCG(seed, 0)), x)
					sg, sx := g.Check(ag...), x.Check(ax...)
					if sg != sx {
						t.Fatalf("window %d (n=%d): gini says %v, %s says %v", i, n, sg, e.name, sx)
					}
					count[sg]++
					if sg != Sat {
						continue
					}
					if err := g.satisfies(g.Order(), ag); err != nil {
						t.Fatalf("window %d: gini: %v", i, err)
					}
					if err := x.satisfies(x.Order(), ax); err != nil {
						t.Fatalf("window %d: %s: %v", i, e.name, err)
					}
				}
				if err := x.Close(); err != nil {
					t.Fatal(err)
				}
			}
			// Both answers must occur, or the comparison proves little.
			if count[Sat] == 0 || count[Unsat] == 0 {
				t.Errorf("answers sat %d, unsat %d, unknown %d: want both sat and unsat", count[Sat], count[Unsat], count[Unknown])
			}
		})
	}
}

// fakeSolver puts an executable named z3 that runs script first on PATH.
func fakeSolver(t *testing.T, script string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "z3"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestExternalSilentSolverIsKilled(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to run a fake solver")
	}
	// A solver that reads nothing and never answers, given more than a
	// pipe holds: neither building the constraints nor the check may
	// block on it.
	fakeSolver(t, "exec sleep 600")
	const n = 20000
	s, err := NewExternal("z3", n, Budget{Time: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.(*external).cmd.Process.Pid
	for i := 1; i < n; i++ {
		s.Edge(i-1, i)
	}
	if got := s.Check(); got != Unknown {
		t.Fatalf("Check = %v, want unknown", got)
	}
	if !gone(pid) {
		t.Errorf("process %d still exists after the deadline", pid)
	}
	if got := s.Check(); got != Unknown {
		t.Errorf("second Check = %v, want unknown", got)
	}
	if err := Err(s); err != nil {
		t.Errorf("Err after a timeout = %v, want nil", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after a timeout = %v, want nil", err)
	}
}

func TestExternalErrorIsUnknown(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to run a fake solver")
	}
	fakeSolver(t, `echo '(error "line 3: bad input")'; cat >/dev/null`)
	s, err := NewExternal("z3", 2, Budget{Time: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.(*external).cmd.Process.Pid
	if got := s.Check(); got != Unknown {
		t.Fatalf("Check = %v, want unknown", got)
	}
	if !gone(pid) {
		t.Errorf("process %d still exists after the failure", pid)
	}
	if err := Err(s); err == nil || err.Error() != `solver z3: (error "line 3: bad input")` {
		t.Errorf("Err = %v, want the solver's error", err)
	}
	err = s.Close()
	if err == nil || !strings.Contains(err.Error(), `solver z3: (error "line 3: bad input")`) {
		t.Errorf("Close = %v, want the solver's error", err)
	}
}

func TestExternalCloseEndsTheProcess(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to run a fake solver")
	}
	// A solver that ignores (exit) and its closed input.
	fakeSolver(t, "trap '' TERM; exec sleep 600")
	s, err := NewExternal("z3", 2, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.(*external).cmd.Process.Pid
	if err := s.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if !gone(pid) {
		t.Errorf("process %d still exists after Close", pid)
	}
}

func TestNewExternalErrors(t *testing.T) {
	if _, err := NewExternal("yices", 2, Budget{}); err == nil || err.Error() != `unknown solver "yices" (want z3 or cvc5)` {
		t.Errorf("NewExternal(yices) = %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err := NewExternal("cvc5", 2, Budget{})
	if err == nil || !strings.HasPrefix(err.Error(), "solver cvc5: not found on PATH (install the Debian package cvc5)") {
		t.Errorf("NewExternal(cvc5) without it on PATH = %v", err)
	}
}

func TestParseValues(t *testing.T) {
	got, err := parseValues("((O_0 3)\n (O_1 (- 2)) (O_2 0))", 3)
	if err != nil || len(got) != 3 || got[0] != 3 || got[1] != -2 || got[2] != 0 {
		t.Errorf("parseValues = %v, %v", got, err)
	}
	for _, bad := range []string{"((O_0 3))", "((O_0 x) (O_1 2))", "((O_7 1))", "((O_0"} {
		if _, err := parseValues(bad, 2); err == nil {
			t.Errorf("parseValues(%q) succeeded", bad)
		}
	}
}

// A closed Budget.Stop ends a check of an external solver that does not
// answer at once, with Unknown, killing the process; that is no failure.
func TestExternalStopKills(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to run a fake solver")
	}
	fakeSolver(t, "exec sleep 600")
	stop := make(chan struct{})
	s, err := NewExternal("z3", 3, Budget{Time: time.Minute, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.(*external).cmd.Process.Pid
	s.Edge(0, 1)
	time.AfterFunc(200*time.Millisecond, func() { close(stop) })
	start := time.Now()
	got := s.Check()
	if took := time.Since(start); got != Unknown || took > time.Second {
		t.Errorf("Check stopped after 200ms = %v after %v, want unknown within a second", got, took.Round(time.Millisecond))
	}
	if !gone(pid) {
		t.Errorf("process %d still exists after the stop", pid)
	}
	if err := Err(s); err != nil {
		t.Errorf("Err after a stop = %v, want nil", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after a stop = %v, want nil", err)
	}
}
