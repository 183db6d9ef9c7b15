//go:build !linux

package main

import "syscall"

// replaySysProcAttr has nothing to add where the kernel cannot signal a
// child at its parent's death.
func replaySysProcAttr() *syscall.SysProcAttr { return nil }
