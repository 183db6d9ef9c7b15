package record

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/avcheck/avcheck/dynamic/record/avrt"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/children"
)

// BuildInstrumented compiles pkg as Build does, with the packages under
// test rewritten for the instrumenting recorder (Instrument) and the
// compiler's optimisations on: the test or program runs at nearly its
// own speed. It returns the binary, the rewriting (which
// RecordInstrumented needs to read what the binary records), and a
// function that removes the temporary directory holding them, which the
// caller must always call.
func BuildInstrumented(ctx context.Context, dir, pkg string, isMain bool, plan *Plan) (bin string, in *Instrumented, cleanup func(), err error) {
	defer children.Spawn()()
	tmp, err := os.MkdirTemp("", "avcheck-run-")
	if err != nil {
		return "", nil, func() {}, err
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	binDir, workDir, srcDir := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work"), filepath.Join(tmp, "src")
	for _, d := range []string{binDir, workDir, srcDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			cleanup()
			return "", nil, func() {}, err
		}
	}
	in, err = Instrument(plan, srcDir)
	if err != nil {
		cleanup()
		return "", nil, func() {}, err
	}
	bin, err = goBuild(ctx, dir, pkg, isMain, binDir, workDir, in.buildFlags(plan))
	var be *BuildError
	if errors.As(err, &be) && in.ownOverlay != "" {
		// The rewritten packages of other modules (deps.go) did not
		// compile: without them, the build fails only if the user's
		// code does, and its errors are then about the user's files.
		in.withoutOtherModules(oneLine(be))
		bin, err = goBuild(ctx, dir, pkg, isMain, binDir, workDir, in.buildFlags(plan))
	}
	// A rewritten file that does not compile is compiled as it is, and
	// the build tried again: each round drops at least one file, and
	// the compiler's errors stop at ten a package.
	for errors.As(err, &be) {
		dropped, derr := in.dropRewriting(be, dir)
		if derr != nil {
			err = derr
			break
		}
		if !dropped {
			break
		}
		bin, err = goBuild(ctx, dir, pkg, isMain, binDir, workDir, in.buildFlags(plan))
	}
	if err != nil {
		cleanup()
		return "", nil, func() {}, err
	}
	return bin, in, cleanup, nil
}

// buildFlags returns the go command's flags of the build of the
// rewritten packages: the plan's, and the overlay.
func (in *Instrumented) buildFlags(plan *Plan) []string {
	return append(slices.Clone(plan.BuildFlags), "-overlay="+in.Overlay)
}

// RecordInstrumented runs a binary that BuildInstrumented built and
// returns the trace of what it did, as Record does for the Delve
// recorder. The runtime writes the events into a file as they happen
// (package avrt), so the trace holds what the program did up to its end
// however it ended: by itself, by a panic or a fatal signal, or killed
// at the time limit or when ctx is done.
func RecordInstrumented(ctx context.Context, in *Instrumented, opts Options) (*trace.Trace, Outcome, error) {
	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	limit := opts.MaxEvents
	if limit <= 0 {
		limit = DefaultMaxEvents
	}
	rawName, err := createEvents(eventsDir(limit))
	if err != nil {
		return nil, Outcome{}, err
	}
	defer os.Remove(rawName)

	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	release := children.Spawn()
	cmd := exec.CommandContext(ctx, opts.Binary, opts.Args...)
	cmd.Dir = opts.Dir
	byDisk := false
	if free, ok := freeBytes(filepath.Dir(rawName)); ok && free/4/int64(avrt.EventSize) < limit {
		limit, byDisk = free/4/int64(avrt.EventSize), true
	}
	limit = max(limit, avrt.ChunkEvents)
	cmd.Env = append(os.Environ(), avrt.EnvFile+"="+rawName, fmt.Sprintf("%s=%d", avrt.EnvLimit, limit))
	cmd.Stdout, cmd.Stderr = out, out
	stopWatch := watchEvents(rawName, limit, opts.Progress)
	err = cmd.Run()
	stopWatch()
	release()
	oc := Outcome{}
	if cmd.Process != nil {
		oc.PID = cmd.Process.Pid
	}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
	case err == nil:
		oc.Complete = true
	case errors.As(err, &ee) && ee.Exited():
		oc.Complete, oc.Status = true, ee.ExitCode()
	case errors.As(err, &ee):
		oc.Message = "the program was killed by a signal: " + ee.String()
	default:
		return nil, oc, fmt.Errorf("running %s: %w", opts.Binary, err)
	}
	if opts.BeforeConvert != nil {
		var raw int64
		if fi, err := os.Stat(rawName); err == nil {
			raw = fi.Size() / int64(avrt.EventSize)
		}
		opts.BeforeConvert(raw)
	}
	t, co, err := in.convert(rawName)
	if err != nil {
		return nil, oc, err
	}
	switch {
	case oc.Message != "":
	case oc.Complete && oc.Status == 0:
		oc.Message = "the program exited normally"
	case oc.Complete && oc.Status == 1:
		oc.Message = "the program exited with status 1 (a test failed or it reported an error; see its output above)"
	case oc.Complete && oc.Status == 2:
		oc.Message = "the program exited with status 2 (a panic or a fatal error such as a deadlock; see its output above)"
	case oc.Complete:
		oc.Message = fmt.Sprintf("the program exited with status %d", oc.Status)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		oc.Message = "the program ran past its time limit and was killed"
	default:
		oc.Message = "interrupted: the program was killed"
	}
	oc.Invalid = co.Invalid
	switch co.Cut {
	case avrt.CutLimit:
		oc.CutAtLimit = true
		for full, name := range in.tests {
			oc.Tests = append(oc.Tests, name)
			if co.Reached[full] {
				oc.Reached = append(oc.Reached, name)
			}
		}
		slices.Sort(oc.Tests)
		oc.Tests = slices.Compact(oc.Tests)
		slices.Sort(oc.Reached)
		oc.Reached = slices.Compact(oc.Reached)
		why := "-max-events"
		if byDisk {
			why = "a quarter of the free space of " + filepath.Dir(rawName)
		}
		// The limit counts the probes' raw events, of which the trace
		// keeps fewer (allocations, for one).
		oc.Cut = fmt.Sprintf("the recording stopped at its limit of about %d probe events (%s), of which the trace keeps %d (an allocation, for one, is a probe but not an event); the rest of the run is not in it", limit, why, len(t.Events))
	case avrt.CutDiskFull:
		oc.Cut = fmt.Sprintf("the recording stopped when %s was full; the trace is the run up to then", filepath.Dir(rawName))
	}
	if oc.Unrecorded, err = in.unrecorded(rawName); err != nil {
		return nil, oc, err
	}
	if opts.Progress != nil {
		opts.Progress(len(t.Events))
	}
	return t, oc, nil
}

// unrecorded returns the accesses of the plan that the rewritten code
// does not record (Plan.Unprobed) in the functions the run entered, as
// the entry probes marked them in the raw file's header; a function
// whose probe could not be placed counts as entered.
func (in *Instrumented) unrecorded(rawName string) ([]Unprobed, error) {
	if len(in.enterIDs) == 0 {
		return nil, nil
	}
	f, err := os.Open(rawName)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	slots := make([]byte, 4*avrt.MaxEntered)
	if _, err := f.ReadAt(slots, avrt.EnteredOffset); err != nil {
		return nil, fmt.Errorf("%s: reading the functions entered: %w", rawName, err)
	}
	// The slots hold the probe ids of the functions entered (avrt.Enter);
	// if none is free, some may have found no slot, and all count as
	// entered.
	entered := make([]bool, len(in.enterIDs))
	full := true
	for i := 0; i < len(slots); i += 4 {
		id := binary.LittleEndian.Uint32(slots[i:])
		if id == 0 {
			full = false
		} else if k, ok := in.raw[id]; ok && k.kind == idEnter && int(k.n) < len(entered) {
			entered[k.n] = true
		}
	}
	var out []Unprobed
	for _, u := range in.plan.Unprobed {
		id, ok := in.enterIDs[u.Func]
		if !ok || !in.entryPlaced[id] || entered[id] || full {
			out = append(out, u)
		}
	}
	sortUnprobed(out)
	return out, nil
}

// progressEvery is how often the events recorded so far are counted
// while the program runs.
const progressEvery = 250 * time.Millisecond

// watchEvents calls progress, from time to time until the returned
// function is called, with the number of events the program has
// recorded into the raw file name so far, counted from the file's size:
// the runtime grows the file a chunk at a time (avrt.ChunkBytes), so the
// count runs ahead by at most the unfilled part of the chunks in use,
// and it costs the program nothing. With progress nil it does nothing.
func watchEvents(name string, limit int64, progress func(int)) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if fi, err := os.Stat(name); err == nil && fi.Size() > avrt.HeaderBytes {
				progress(int(min((fi.Size()-avrt.HeaderBytes)/int64(avrt.EventSize), limit)))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
