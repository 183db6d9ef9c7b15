//go:build unix

package children

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Gone reports whether process pid has left no trace behind: not
// running, not stopped, not a zombie (the check that a recording or a
// replay leaves no process behind). A pid of 0 or less names no process
// and is not gone: a check given no process's id fails.
func Gone(pid int) bool {
	if pid <= 0 {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'X'
	}
	return syscall.Kill(pid, 0) != nil
}
