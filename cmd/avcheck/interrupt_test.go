//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// fakeZ3 answers avcheck's trivial check of the solver (two events), and
// at the first real check marks the file $AVCHECK_TEST_MARK and sleeps:
// a precise stage that would take ten minutes.
const fakeZ3 = `#!/bin/sh
n=0
while IFS= read -r line; do
	case "$line" in
	"(declare-const O_"*) n=$((n+1)) ;;
	"(check-sat"*) if [ "$n" -le 2 ]; then echo sat; else : >"$AVCHECK_TEST_MARK"; exec sleep 600; fi ;;
	"(get-value"*) echo "((O_0 0) (O_1 1))" ;;
	"(exit)"*) exit 0 ;;
	esac
done
`

// Ctrl-C at each stage of avcheck run: it stops within a second, says
// what it had done, and leaves no temporary file (avcheck's, the go
// command's) and no process (the go command, the compilers, the recorded
// program, a solver, a replay) behind. An interrupted recording is predicted on, as
// before; an interrupted prediction shows what it decided and exits 1;
// an interrupted replay kills the replay processes and their programs,
// and the findings are reported.
// (The search for candidates and the writing of the trace are too short
// on a recorded run to be caught in the act: TestPredictStops in
// dynamic/predict and TestSaveTraceInterrupted cover them.)
func TestRunInterrupted(t *testing.T) {
	bin := buildAvcheck(t, t.TempDir())
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "z3"), []byte(fakeZ3), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		stage string
		args  []string
		// ready reports that the stage has begun.
		ready    func(run runState) bool
		code     int
		lastLine string
	}{
		// Loading parses and type-checks the package and its
		// dependencies, seconds.
		{"load", []string{"./testdata/record/counter"}, func(r runState) bool { return time.Since(r.start) > 300*time.Millisecond },
			exitError, "avcheck run: interrupted while loading ./testdata/record/counter; nothing was recorded"},
		{"build", []string{"./testdata/record/counter"}, func(r runState) bool { return exists(filepath.Join(r.tmp, "avcheck-run-*", "work")) },
			exitError, "avcheck run: interrupted while building ./testdata/record/counter; nothing was recorded"},
		{"record", []string{"-replay=false", "./testdata/record/forever"}, func(r runState) bool { return running(r.tmp) },
			exitFindings, "proven"},
		// forever never ends, so its replay runs until -replay-timeout
		// (20s by default); the stage has begun once a replay process
		// runs the program. -max-events keeps the trace small on any
		// machine: two seconds of forever were 13.8M events on CI's,
		// and there the run ended more than a second after the
		// interrupt in two of three runs; what the test measures is the
		// replay stage's stop, not the time to report a large trace.
		{"replay", []string{"-timeout", "2s", "-max-events", "200000", "./testdata/record/forever"}, func(r runState) bool { return replaying(r.pgid, r.bin) && running(r.tmp) },
			exitFindings, "interrupted while replaying"},
		{"precise", []string{"-solver=z3", "./testdata/record/counter"}, func(r runState) bool { return exists(r.mark) },
			exitError, "avcheck run: interrupted while predicting, before any of the 1 possible violations was decided; the report was not written"},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			root, err := filepath.Abs("../..")
			if err != nil {
				t.Fatal(err)
			}
			tmp, mark := t.TempDir(), filepath.Join(t.TempDir(), "mark")
			args := append([]string{"run", "-json", "-report", filepath.Join(t.TempDir(), "report.json")}, tc.args...)
			cmd := exec.Command(bin, args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "AVCHECK_TEST_MARK="+mark, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			pgid, exited := startGroup(t, cmd)
			deadline := time.Now().Add(2 * time.Minute)
			for !tc.ready(runState{tmp, mark, start, pgid, bin}) {
				select {
				case <-exited:
					t.Fatalf("avcheck run ended before the %s stage:\n%s", tc.stage, stderr.String())
				case <-time.After(5 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("the %s stage did not begin within 2 minutes:\n%s", tc.stage, stderr.String())
				}
			}
			if tc.stage == "record" {
				// Some events: the debugger takes a while to set its
				// breakpoints once the program runs, longer on a
				// loaded machine (11 events after half a second at a
				// load of 7, none of them a finding).
				time.Sleep(2 * time.Second)
			}
			// Ctrl-C: SIGINT to the terminal's process group.
			if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			// After an interrupted recording, the prediction follows.
			limit := time.Second
			if tc.stage == "record" {
				limit = time.Minute
			}
			select {
			case <-exited:
			case <-time.After(limit):
				t.Fatalf("avcheck run still running %v after the interrupt in the %s stage:\n%s", limit, tc.stage, stderr.String())
			}
			took := time.Since(sent)
			if strings.Contains(stderr.String(), "does not permit ptrace") {
				t.Skip("ptrace is not permitted here")
			}
			code := cmd.ProcessState.ExitCode()
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			switch tc.stage {
			case "record":
				// The run is predicted on: its finding is in the JSON.
				last = ""
				if strings.Contains(stdout.String(), `"level": "proven"`) && strings.Contains(stderr.String(), "avcheck run: interrupted: the program was killed;") {
					last = "proven"
				}
			case "replay":
				// The findings are reported, the replays stopped; the
				// last line is the go vet command.
				last = ""
				if strings.Contains(stderr.String(), "avcheck run: interrupted while replaying: ") {
					last = "interrupted while replaying"
				}
			}
			if code != tc.code || last != tc.lastLine {
				t.Errorf("exit %d, last line %q; want exit %d and %q\nstderr:\n%s", code, last, tc.code, tc.lastLine, stderr.String())
			}
			if tc.stage != "record" && took > time.Second {
				t.Errorf("stopped %v after the interrupt, want within a second", took.Round(time.Millisecond))
			}
			leftNothing(t, pgid, tmp)
		})
	}
}

// startGroup starts cmd in a process group of its own, as a terminal
// starts a job, and returns the group and a channel closed when cmd has
// exited; the group is killed when the test ends.
func startGroup(t *testing.T, cmd *exec.Cmd) (int, <-chan struct{}) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return pgid, exited
}

// leftNothing checks that avcheck, run in process group pgid with TMPDIR
// tmp, left no process, no recorded program and no temporary file behind.
func leftNothing(t *testing.T, pgid int, tmp string) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // for the kernel to reap what was killed
	if left := groupProcesses(pgid); len(left) > 0 {
		t.Errorf("processes left behind: %s", strings.Join(left, "; "))
	}
	if running(tmp) {
		t.Errorf("the recorded program is still running")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("temporary files left behind in TMPDIR: %s", strings.Join(names, " "))
	}
}

// runState is what tells that a stage of avcheck run has begun.
type runState struct {
	tmp   string // avcheck's TMPDIR
	mark  string // the file the fake solver creates at a real check
	start time.Time
	pgid  int    // avcheck's process group
	bin   string // avcheck
}

// replaying reports whether a replay process (avcheck started with no
// arguments: replay.go) runs in the process group.
func replaying(pgid int, bin string) bool {
	for _, p := range groupProcesses(pgid) {
		if f := strings.Fields(p); len(f) == 3 && f[1] == bin {
			return true
		}
	}
	return false
}

// exists reports whether a file matches the pattern.
func exists(pattern string) bool {
	m, _ := filepath.Glob(pattern)
	return len(m) > 0
}

// running reports whether a program built under dir is running.
func running(dir string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// groupProcesses lists the processes of the process group, as "pid
// command line", zombies included.
func groupProcesses(pgid int) []string {
	var out []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// After the command: state, ppid, pgrp.
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		out = append(out, filepath.Base(filepath.Dir(p))+" "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")+" ("+f[0]+")")
	}
	return out
}

// Writing the trace that -o keeps stops when it is interrupted, leaving
// neither the file nor its temporary.
func TestSaveTraceInterrupted(t *testing.T) {
	tr := &trace.Trace{}
	for i := range 10000 {
		tr.Events = append(tr.Events, trace.Event{Seq: uint64(i), G: 1, Kind: trace.KindRegionBegin})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "run.avt")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := saveTrace(ctx, path, trace.FormatNative, tr); err == nil {
		t.Errorf("saveTrace with its context done succeeded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left in the directory: %v", entries)
	}
	if err := saveTrace(context.Background(), path, trace.FormatNative, tr); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after a whole write, the directory holds %v, want the trace alone", entries)
	}
}

// SIGTERM, which CI systems send at their time limit, ends the whole run
// of avcheck run or avcheck test, not only the stage under way: the
// recorded program is killed, nothing more is predicted, and avcheck test
// begins no other package. Sent to avcheck alone, as a supervisor sends
// it, not to its process group.
func TestTerminated(t *testing.T) {
	bin := buildAvcheck(t, t.TempDir())
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		// want are the last lines of standard output and error; a run
		// that predicts nothing prints no report.
		wantOut, wantErr string
	}{
		{"run", []string{"run", "-replay=false", "./testdata/record/forever"},
			"", "avcheck run: terminated while recording ./testdata/record/forever; nothing was predicted"},
		{"test", []string{"test", "-p", "1", "./testdata/record/endless", "./testdata/record/counter"},
			"avcheck test: 0 packages recorded, 0 packages with findings (0 findings), 0 packages whose tests failed, 2 packages not recorded",
			""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			args := append([]string{tc.args[0], "-report", filepath.Join(t.TempDir(), "report.json")}, tc.args[1:]...)
			cmd := exec.Command(bin, args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			pgid, exited := startGroup(t, cmd)
			deadline := time.Now().Add(2 * time.Minute)
			for !running(tmp) {
				select {
				case <-exited:
					t.Fatalf("avcheck ended before it recorded:\n%s", stderr.String())
				case <-time.After(5 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("the recording did not begin within 2 minutes:\n%s", stderr.String())
				}
			}
			time.Sleep(500 * time.Millisecond) // some events
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Fatalf("avcheck still running 10s after SIGTERM:\n%s", stderr.String())
			}
			if strings.Contains(stderr.String(), "does not permit ptrace") {
				t.Skip("ptrace is not permitted here")
			}
			last := func(s string) string {
				lines := strings.Split(strings.TrimSpace(s), "\n")
				return lines[len(lines)-1]
			}
			code := cmd.ProcessState.ExitCode()
			if code != exitError || last(stdout.String()) != tc.wantOut || last(stderr.String()) != tc.wantErr {
				t.Errorf("exit %d, last lines %q and %q; want exit %d, %q and %q\nstdout:\n%s\nstderr:\n%s",
					code, last(stdout.String()), last(stderr.String()), exitError, tc.wantOut, tc.wantErr, stdout.String(), stderr.String())
			}
			if tc.name == "test" && !strings.Contains(stdout.String(), "FAIL\tgithub.com/avcheck/avcheck/testdata/record/counter\t[not recorded: interrupted before it began]\n") {
				t.Errorf("the package not begun is not said to be so:\n%s", stdout.String())
			}
			leftNothing(t, pgid, tmp)
		})
	}
}
