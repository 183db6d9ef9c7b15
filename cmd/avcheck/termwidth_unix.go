//go:build unix

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth is the number of columns of the terminal f, 80 if it
// cannot be told.
func terminalWidth(f *os.File) int {
	var ws struct{ rows, cols, x, y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	if errno != 0 || ws.cols == 0 {
		return 80
	}
	return int(ws.cols)
}
