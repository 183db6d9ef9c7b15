//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY returns a new pseudo-terminal's two ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var n uint32
	var unlock int32
	for _, c := range []struct {
		req uintptr
		arg unsafe.Pointer
	}{{syscall.TIOCGPTN, unsafe.Pointer(&n)}, {syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)}} {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), c.req, uintptr(c.arg)); errno != 0 {
			m.Close()
			t.Skipf("no pseudo-terminal: %v", errno)
		}
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	return m, s
}

// On a terminal, avcheck run shows its stage on one line rewritten in
// place (the stage, its counts and time, no wider than the terminal),
// says which tests it records, writes the program's output and its own
// messages above the line, and leaves no line behind. Elsewhere it shows
// none of it.
func TestRunProgress(t *testing.T) {
	bin := buildAvcheck(t, t.TempDir())
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "-report", filepath.Join(t.TempDir(), "report.json"), "./testdata/record/counter"}

	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	cmd.Stdout = io.Discard
	cmd.Stderr = slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var term bytes.Buffer
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&term, master) // ends with EIO once the process has exited
		close(copied)
	}()
	_ = cmd.Wait()
	<-copied
	if strings.Contains(term.String(), "does not permit ptrace") {
		t.Skip("ptrace is not permitted here")
	}
	out := strings.ReplaceAll(term.String(), "\r\n", "\n") // the terminal's newlines
	const redraw = "\r\x1b[K"
	for _, want := range []string{
		redraw + "avcheck run: loading ./testdata/record/counter, 0s",
		redraw + "avcheck run: building ./testdata/record/counter, ",
		redraw + "avcheck run: recording the only test of ./testdata/record/counter: TestInc\n",
		redraw + "avcheck run: recording, ",
		" events, ",
		"s (Ctrl-C: stop it and predict)",
		redraw + "PASS\n",
		redraw + "avcheck run: the program exited normally; ",
		redraw + "avcheck run: predicting, ",
		redraw + "avcheck run: replaying, 0 of 1 witnesses, ",
		redraw + "avcheck run: replayed the witnesses of 1 of 1 proven finding in ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal does not show %q:\n%q", want, out)
		}
	}
	for _, l := range strings.Split(out, redraw) {
		// A progress line is what a redraw writes without a newline.
		if !strings.Contains(l, "\n") && len(l) > 79 {
			t.Errorf("a progress line of %d characters, wider than the terminal's 80 columns: %q", len(l), l)
		}
	}
	// The line is gone at the end: what follows the last redraw is
	// whole lines of messages.
	last := out[strings.LastIndex(out, redraw)+len(redraw):]
	if !strings.HasPrefix(last, "avcheck run: ") || !strings.HasSuffix(last, "\n") {
		t.Errorf("the terminal ends with %q, want avcheck's last messages alone", last)
	}

	// Not a terminal: none of it.
	cmd = exec.Command(bin, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	if s := stderr.String(); strings.ContainsAny(s, "\r\x1b") || strings.Contains(s, "loading") || strings.Contains(s, "recording the") {
		t.Errorf("standard error, not a terminal, shows progress:\n%q", s)
	}
}
