package main

import "syscall"

// replaySysProcAttr makes a replay process end with avcheck: if avcheck
// dies without ending it (SIGKILL), the kernel sends it SIGTERM, on
// which it kills the program it traces.
func replaySysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
