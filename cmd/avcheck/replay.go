package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/record"
	"github.com/avcheck/avcheck/dynamic/replay"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/children"
)

// replayChildEnv marks a process of avcheck that replays one witness for
// its parent. Delve's native backend traces one program per process (it
// waits for any child: internal/children), so replays run in parallel as
// processes of their own.
const replayChildEnv = "AVCHECK_REPLAY_CHILD"

// defaultReplayTimeout bounds one replay: a witness that can be forced
// is forced in a few seconds on the corpus, and one that cannot is most
// often found stuck within a second.
const defaultReplayTimeout = 20 * time.Second

// replayJob is what a replay process is given on its standard input.
type replayJob struct {
	Witness *replay.Witness
	Binary  string
	Args    []string
	Dir     string
	Timeout time.Duration
}

// replayAnswer is what a replay process writes on its standard output.
type replayAnswer struct {
	Result replay.Result
	Err    string
}

// replayChild is the replay process: it reads a replayJob, replays it
// and writes a replayAnswer. An interrupt or SIGTERM ends the replay,
// which kills the program before the answer is written.
func replayChild(stdin io.Reader, stdout io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var job replayJob
	if err := json.NewDecoder(stdin).Decode(&job); err != nil {
		fmt.Fprintf(os.Stderr, "avcheck: reading the witness to replay: %v\n", err)
		return exitError
	}
	res, err := replay.Replay(ctx, job.Witness, replay.Options{Binary: job.Binary, Args: job.Args, Dir: job.Dir, Timeout: job.Timeout})
	ans := replayAnswer{Result: res}
	if err != nil {
		ans.Err = err.Error()
	}
	if ctx.Err() != nil && !res.Enforced {
		ans.Result.Reason = "the replay was interrupted"
		ans.Result.TimedOut = false
	}
	if err := json.NewEncoder(stdout).Encode(ans); err != nil {
		return exitError
	}
	return exitClean
}

// replayOptions says how avcheck run replays its findings' witnesses.
type replayOptions struct {
	binary  string // built for the Delve recorder (record.Build)
	args    []string
	dir     string
	timeout time.Duration
	// recordedFailed says the recorded run did not end with status 0, so
	// that a replay's failure shows nothing the recording did not.
	recordedFailed bool
	// slots bounds the replays running at once, shared by the packages
	// avcheck test records.
	slots chan struct{}
	// done counts the replays finished, for the progress line.
	done *atomic.Int64
	// sites is what the probe plan knows of the trace's sites: the
	// source expressions of the accesses, for the replay's check of each
	// access's variable, and the writes made after a call.
	sites replay.Sites
}

// replayable says whether finding f is one whose witness avcheck run
// replays: a reported finding at level proven.
func replayable(f *predict.Finding) bool {
	return f.Level == predict.LevelProven && f.Dropped == "" && len(f.Witness) > 0
}

// replayStats is what replayFindings did.
type replayStats struct {
	replayed int             // witnesses replayed to an answer
	raised   int             // findings raised to replayed
	times    []time.Duration // of each replay answered, in no order
	// Why the others were not confirmed.
	unseen      int // the whole witness ran, and the violation did not show
	unforced    int // the program did not follow the witness to its end
	timedOut    int // of unforced: the replay ran past its time limit
	failed      int // no witness could be made, or the replay gave no answer
	interrupted int // interrupted before its replay began or ended
}

// notConfirmed says, in words, why findings were not confirmed: "2
// not confirmed: 1 ran the whole witness without the violation
// showing, 1 could not be forced to the witness (at the time limit)".
func (st *replayStats) notConfirmed() string {
	n := st.unseen + st.unforced + st.failed + st.interrupted
	if n == 0 {
		return "0 not confirmed"
	}
	var why []string
	if st.unseen > 0 {
		why = append(why, fmt.Sprintf("%d ran the whole witness without the violation showing", st.unseen))
	}
	if st.unforced > 0 {
		s := fmt.Sprintf("%d could not be forced to the witness", st.unforced)
		switch {
		case st.timedOut == st.unforced && st.unforced == 1:
			s += " (at the time limit)"
		case st.timedOut == st.unforced:
			s += " (all at the time limit)"
		case st.timedOut > 0:
			s += fmt.Sprintf(" (%d at the time limit)", st.timedOut)
		}
		why = append(why, s)
	}
	if st.failed > 0 {
		why = append(why, fmt.Sprintf("%d could not be replayed", st.failed))
	}
	if st.interrupted > 0 {
		why = append(why, fmt.Sprintf("%d interrupted", st.interrupted))
	}
	return fmt.Sprintf("%d not confirmed: %s (the reason is in each finding)", n, strings.Join(why, ", "))
}

func (st *replayStats) median() time.Duration {
	ts := slices.Clone(st.times)
	slices.Sort(ts)
	return ts[len(ts)/2]
}

func (st *replayStats) longest() time.Duration { return slices.Max(st.times) }

// replayFindings replays the witness of every replayable finding of fs,
// each in a process of its own, as many at a time as opts.slots holds,
// and raises to LevelReplayed those whose replay shows the violation
// (replay.Observe); the others keep their level, with why in their
// Replay. A cancelled ctx stops the replays under way (their programs
// are killed) and starts no more.
func replayFindings(ctx context.Context, t *trace.Trace, fs []predict.Finding, opts replayOptions) (replayStats, error) {
	var st replayStats
	self, err := os.Executable()
	if err != nil {
		return st, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range fs {
		f := &fs[i]
		if !replayable(f) {
			continue
		}
		w, err := replay.FromTrace(t, *f, opts.sites)
		if err != nil {
			f.Replay = "not confirmed: " + err.Error()
			st.failed++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			notStarted := func() {
				f.Replay = "not confirmed: the replay was interrupted before it started"
				mu.Lock()
				st.interrupted++
				mu.Unlock()
			}
			select {
			case opts.slots <- struct{}{}:
			case <-ctx.Done():
				notStarted()
				return
			}
			defer func() { <-opts.slots }()
			if ctx.Err() != nil {
				notStarted()
				return
			}
			start := time.Now()
			res, err := replayOne(ctx, self, w, opts)
			took := time.Since(start)
			if opts.done != nil {
				opts.done.Add(1)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				f.Replay = "not confirmed: " + err.Error()
				if ctx.Err() != nil {
					st.interrupted++
				} else {
					st.failed++
				}
				return
			}
			o := replay.Observe(t, *f, w, res, opts.recordedFailed)
			st.replayed++
			st.times = append(st.times, took)
			switch {
			case o.Confirmed:
				f.Level = predict.LevelReplayed
				f.Replay = o.Text
				st.raised++
				return
			case ctx.Err() != nil:
				st.interrupted++
			case res.Enforced:
				st.unseen++
			default:
				st.unforced++
				if res.TimedOut {
					st.timedOut++
				}
			}
			f.Replay = "not confirmed: " + o.Text
		}()
	}
	wg.Wait()
	return st, nil
}

// replayOne runs one replay process and returns what it observed. The
// process gets SIGTERM when ctx is done or its time is past (it then
// kills its program and answers), and SIGKILL if it has not ended a few
// seconds later.
func replayOne(ctx context.Context, self string, w *replay.Witness, opts replayOptions) (replay.Result, error) {
	job, err := json.Marshal(replayJob{Witness: w, Binary: opts.binary, Args: opts.args, Dir: opts.dir, Timeout: opts.timeout})
	if err != nil {
		return replay.Result{}, err
	}
	// The replay bounds itself; this bound is for a process that does
	// not.
	ctx, cancel := context.WithTimeout(ctx, opts.timeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), replayChildEnv+"=1", replay.ProgramEnv+"=1")
	cmd.Stdin = bytes.NewReader(job)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = replaySysProcAttr()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	// A process that avcheck does not trace itself: a recording in this
	// process (another package of avcheck test) must not run meanwhile.
	release := children.Spawn()
	err = cmd.Run()
	release()
	var ans replayAnswer
	if jerr := json.Unmarshal(stdout.Bytes(), &ans); jerr != nil {
		if err == nil {
			err = jerr
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = errors.New(msg)
		}
		if ctx.Err() != nil {
			err = errors.New("the replay was interrupted")
		}
		return replay.Result{}, fmt.Errorf("the replay did not answer: %w", err)
	}
	if ans.Err != "" {
		return ans.Result, errors.New(ans.Err)
	}
	return ans.Result, nil
}

// replayStage is avcheck run's replay of its proven findings.
type replayStage struct {
	p       *progress
	errw    io.Writer // standard error, above the progress line
	dir     string
	pkg     string
	program bool
	plan    *record.Plan
	timeout time.Duration
	slots   chan struct{} // nil: GOMAXPROCS
	// opts has the program's arguments, directory and outcome; its
	// binary is empty when the recording's was instrumented, and the
	// stage then builds one for the debugger.
	opts replayOptions
}

// run replays the witnesses of fs's proven findings, raising those it
// confirms, and says in one line what it did and how long it took.
func (rs *replayStage) run(ctx context.Context, t *trace.Trace, fs []predict.Finding) {
	n := 0
	for i := range fs {
		if replayable(&fs[i]) {
			n++
		}
	}
	if rs.opts.binary == "" {
		rs.p.Stage("building "+rs.pkg+" for the replays", nil, "")
		bin, cleanup, err := record.Build(ctx, rs.dir, rs.pkg, rs.program, rs.plan)
		defer cleanup()
		if err != nil {
			if ctx.Err() != nil {
				err = errors.New("interrupted")
			}
			for i := range fs {
				if replayable(&fs[i]) {
					fs[i].Replay = "not confirmed: the program could not be built for the replay: " + oneLine(err)
				}
			}
			fmt.Fprintf(rs.errw, "avcheck run: not replayed: building %s for the debugger: %s\n", rs.pkg, oneLine(err))
			return
		}
		rs.opts.binary = bin
	}
	var done atomic.Int64
	rs.opts.done = &done
	if rs.plan != nil {
		rs.opts.sites = rs.plan
	}
	rs.opts.timeout = rs.timeout
	rs.opts.slots = rs.slots
	if rs.opts.slots == nil {
		rs.opts.slots = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	rs.p.Stage("replaying", func() string { return fmt.Sprintf("%d of %d witnesses", done.Load(), n) }, "Ctrl-C: stop")
	start := time.Now()
	st, err := replayFindings(ctx, t, fs, rs.opts)
	if err != nil {
		fmt.Fprintf(rs.errw, "avcheck run: not replayed: %v\n", err)
		return
	}
	line := fmt.Sprintf("replayed the witnesses of %d of %s in %.1fs", st.replayed, plural(n, "proven finding"), time.Since(start).Seconds())
	if len(st.times) > 0 {
		line += fmt.Sprintf(" (each: median %.1fs, longest %.1fs)", st.median().Seconds(), st.longest().Seconds())
	}
	line += fmt.Sprintf(": %s raised to replayed, %s", plural(st.raised, "finding"), st.notConfirmed())
	if ctx.Err() != nil {
		line = "interrupted while replaying: " + line
	}
	fmt.Fprintf(rs.errw, "avcheck run: %s\n", line)
}

func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
