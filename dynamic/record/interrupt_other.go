//go:build !unix

package record

import "os/exec"

// interruptible leaves cmd as it is: it is killed when its context is
// done.
func interruptible(*exec.Cmd) {}

// killedByInterrupt reports false: there is no SIGINT to tell apart.
func killedByInterrupt(*exec.ExitError) bool { return false }
