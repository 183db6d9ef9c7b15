//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/avcheck/avcheck/internal/children"
)

// A replay that reaches its time limit kills its program: forever never
// ends, so its replay always runs until -replay-timeout, and afterwards
// neither the replay process nor the program is left.
func TestReplayTimeoutLeavesNothing(t *testing.T) {
	t.Parallel()
	bin := buildAvcheck(t, t.TempDir())
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command(bin, "run", "-json", "-report", filepath.Join(t.TempDir(), "report.json"), "-timeout", "2s", "-replay-timeout", "2s", "./testdata/record/forever")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// The recordings of the parallel tests run under Delve in this
	// process, which waits for any child: avcheck runs as they allow.
	release := children.Spawn()
	err = cmd.Run()
	release()
	pgid := cmd.Process.Pid
	if strings.Contains(stderr.String(), "does not permit ptrace") {
		t.Skip("ptrace is not permitted here")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFindings {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, exitFindings, stderr.String())
	}
	if !strings.Contains(stderr.String(), "avcheck run: replayed the witnesses of 1 of 1 proven finding in ") {
		t.Errorf("stderr does not say the witness was replayed:\n%s", stderr.String())
	}
	if left := groupProcesses(pgid); len(left) > 0 {
		t.Errorf("processes left behind: %s", strings.Join(left, "; "))
	}
	if running(tmp) {
		t.Errorf("the replayed program is still running")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("temporary files left behind in TMPDIR: %d", len(entries))
	}
}
