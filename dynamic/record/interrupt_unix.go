//go:build unix

package record

import (
	"os/exec"
	"syscall"
	"time"
)

// interruptible has the go command that cmd runs stopped, when its
// context is done, as Ctrl-C stops it: by SIGINT to it and the compilers
// it runs, in a process group of their own. Killing it, exec's default,
// would leave the compilers running.
func interruptible(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second // then killed
}

// killedByInterrupt reports whether the process ended by SIGINT.
func killedByInterrupt(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}
