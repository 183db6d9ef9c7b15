package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestMain makes this test binary the replay process too: avcheck run
// starts its replays as processes of its own executable, which in these
// tests is the test binary.
func TestMain(m *testing.M) {
	if os.Getenv(replayChildEnv) != "" {
		os.Exit(replayChild(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// The lost updates of testdata/record/counter (two goroutines of one go
// statement) and of seqtests (two parallel tests, after two tests that
// end before the program first stops), recorded by either recorder,
// replay: both goroutines read 0 and write 1, and the finding is raised
// to replayed with what was seen. With the instrumenting recorder the
// replay runs a binary built for the debugger.
func TestRunReplay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg, finding, v string
	}{
		{"counter", "replayed R-W-W c.n counter.go:16:rd counter.go:19:wr counter.go:19:wr", "c.n"},
		{"seqtests", "replayed R-W-W shared seq_test.go:33:rd seq_test.go:36:wr seq_test.go:36:wr", "shared"},
	} {
		for _, recorder := range []string{"delve", "instrument"} {
			t.Run(tc.pkg+"/"+recorder, func(t *testing.T) {
				t.Parallel()
				r := avcheckRun(t, context.Background(), "-replay", "-recorder="+recorder, "./testdata/record/"+tc.pkg)
				// Known flaw, not fixed: on a loaded machine the Delve
				// replay of seqtests sometimes finds the goroutine of
				// its first step already ended (the sequential tests
				// before the parallel ones run on before it holds
				// them), and the finding stays proven, "could not be
				// forced". Said here, and tried again, up to three
				// times more (CI once saw two in a row).
				for try := 2; try <= 4 && len(r.doc.Findings) == 1 && strings.Contains(r.doc.Findings[0].Replay, "that goroutine has ended"); try++ {
					t.Logf("replay not confirmed, trying again (%d of 4): %s", try, r.doc.Findings[0].Replay)
					r = avcheckRun(t, context.Background(), "-replay", "-recorder="+recorder, "./testdata/record/"+tc.pkg)
				}
				if r.code != exitFindings {
					t.Fatalf("exit %d, want %d\n%s", r.code, exitFindings, r.stderr)
				}
				wantFindings(t, r, tc.finding)
				if len(r.doc.Findings) != 1 {
					return
				}
				a := r.doc.Findings[0].Accesses
				first, other := a[0].Goroutine, a[1].Goroutine
				want := fmt.Sprintf("g%d read %s = 0, g%d then wrote %s = 1, and g%d wrote %s = 1 over it: g%d's update is lost", first, tc.v, other, tc.v, first, tc.v, other)
				if got := r.doc.Findings[0].Replay; got != want {
					t.Errorf("replay: %q\nwant %q", got, want)
				}
				if !strings.Contains(r.stderr, "avcheck run: replayed the witnesses of 1 of 1 proven finding in ") || !strings.Contains(r.stderr, ": 1 finding raised to replayed, 0 not confirmed") {
					t.Errorf("stderr does not say what was replayed:\n%s", r.stderr)
				}
			})
		}
	}
}

// Lost updates of a pointer and of a slice replay, and the replay shows
// the values each goroutine stored: the address a pointer holds, a
// slice's header (testdata/record/splitpush). Push's result is stored
// by the test's goroutines once Push returned, before their deferred
// Done: neither recorder reports a race on it.
func TestRunReplayValues(t *testing.T) {
	t.Parallel()
	for _, recorder := range []string{"delve", "instrument"} {
		t.Run(recorder, func(t *testing.T) {
			t.Parallel()
			r := avcheckRun(t, context.Background(), "-replay", "-recorder="+recorder, "./testdata/record/splitpush")
			if r.code != exitFindings {
				t.Fatalf("exit %d, want %d\n%s", r.code, exitFindings, r.stderr)
			}
			wantFindings(t, r,
				"replayed R-W-W s.top stack.go:24:rd stack.go:28:wr stack.go:28:wr",
				"replayed R-W-W s.log stack.go:37:rd stack.go:40:wr stack.go:40:wr")
			values := map[string]string{
				"s.top": `0x[0-9a-f]+`,
				"s.log": `a slice of length 1, capacity 1 at 0x[0-9a-f]+`,
			}
			for _, f := range r.doc.Findings {
				first, other := f.Accesses[0].Goroutine, f.Accesses[1].Goroutine
				x, v := regexp.QuoteMeta(f.Variable), values[f.Variable]
				want := fmt.Sprintf(`^g%d read %s = nil, g%d then wrote %s = %s, and g%d wrote %s = %s over it: g%d's update is lost$`, first, x, other, x, v, first, x, v, other)
				if !regexp.MustCompile(want).MatchString(f.Replay) {
					t.Errorf("replay: %q\nwant %q", f.Replay, want)
				}
			}
		})
	}
}

// A witness that the program's own order forbids stays proven, with the
// reason: pipeorder's test runs its goroutines one after the other
// through a pipe, which no trace records. The corpus's turn scheduler
// orders its goroutines the same way, but steps aside when the program
// is replayed (AVCHECK_REPLAY): splitcounter's lost update replays, and
// its test fails, which the replay note quotes.
// Without -replay nothing is replayed and the finding has no replay note.
func TestRunReplayNotForced(t *testing.T) {
	t.Parallel()
	r := avcheckRun(t, context.Background(), "-replay", "./testdata/record/pipeorder")
	if r.code != exitFindings {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitFindings, r.stderr)
	}
	wantFindings(t, r, "proven R-W-W c.n counter.go:18:rd counter.go:21:wr counter.go:21:wr")
	if len(r.doc.Findings) == 1 {
		want := "not confirmed: the program orders its goroutines itself, through I/O that the trace does not record: goroutine #1 of the go statement at counter_test.go:29, whose step comes next, waits for I/O at counter_test.go:32 in github.com/avcheck/avcheck/testdata/record/pipeorder.TestInc.func2"
		if got := r.doc.Findings[0].Replay; got != want {
			t.Errorf("replay: %q\nwant %q", got, want)
		}
	}
	if !strings.Contains(r.stderr, ": 0 findings raised to replayed, 1 not confirmed: 1 could not be forced to the witness (the reason is in each finding)\n") {
		t.Errorf("stderr does not say what was replayed:\n%s", r.stderr)
	}

	r = avcheckRun(t, context.Background(), "-replay", "./testdata/corpus/splitcounter", "-run", "^TestInc$")
	wantFindings(t, r, "replayed R-W-W c.n counter.go:20:rd counter.go:23:wr counter.go:23:wr")
	if len(r.doc.Findings) == 1 {
		a := r.doc.Findings[0].Accesses
		first, other := a[0].Goroutine, a[1].Goroutine
		want := fmt.Sprintf("g%d read c.n = 0, g%d then wrote c.n = 1, and g%d wrote c.n = 1 over it: g%d's update is lost; the test failed: counter_test.go:15: count 1, want 2", first, other, first, other)
		if got := r.doc.Findings[0].Replay; got != want {
			t.Errorf("replay: %q\nwant %q", got, want)
		}
	}

	r = avcheckRun(t, context.Background(), "-replay=false", "./testdata/corpus/splitcounter", "-run", "^TestInc$")
	wantFindings(t, r, "proven R-W-W c.n counter.go:20:rd counter.go:23:wr counter.go:23:wr")
	if len(r.doc.Findings) == 1 && r.doc.Findings[0].Replay != "" {
		t.Errorf("replay %q without -replay", r.doc.Findings[0].Replay)
	}
	if strings.Contains(r.stderr, "replayed") {
		t.Errorf("stderr speaks of a replay without -replay:\n%s", r.stderr)
	}
}

// The replay's summary says why the findings not confirmed were not.
func TestReplayNotConfirmed(t *testing.T) {
	for _, tc := range []struct {
		st   replayStats
		want string
	}{
		{replayStats{}, "0 not confirmed"},
		{replayStats{unseen: 1}, "1 not confirmed: 1 ran the whole witness without the violation showing (the reason is in each finding)"},
		{replayStats{unforced: 1, timedOut: 1}, "1 not confirmed: 1 could not be forced to the witness (at the time limit) (the reason is in each finding)"},
		{replayStats{unforced: 2, timedOut: 2}, "2 not confirmed: 2 could not be forced to the witness (all at the time limit) (the reason is in each finding)"},
		{replayStats{unseen: 1, unforced: 3, timedOut: 1, failed: 1, interrupted: 2},
			"7 not confirmed: 1 ran the whole witness without the violation showing, 3 could not be forced to the witness (1 at the time limit), 1 could not be replayed, 2 interrupted (the reason is in each finding)"},
	} {
		if got := tc.st.notConfirmed(); got != tc.want {
			t.Errorf("%+v: %q\nwant %q", tc.st, got, tc.want)
		}
	}
}
