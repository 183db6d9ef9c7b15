// Package children keeps a process that traces a program under Delve
// alone among the child processes of avcheck.
//
// Delve's native backend waits for any child (waitpid(-1), to see the
// traced program's new threads), so it would take the exit of any other
// child process, such as the go command that a plan or a build runs, or
// the stops of a second traced program. A recording (dynamic/record) and
// a replay (dynamic/replay) hold the lock exclusively while their program
// runs; whatever starts other children holds it shared. It is the one
// package variable of avcheck, and the reason is the operating system's.
// A process that traces must start no other children while it does.
package children

import "sync"

var lock sync.RWMutex

// Trace takes the lock exclusively, for a program run under Delve, and
// returns its release.
func Trace() (release func()) {
	lock.Lock()
	return lock.Unlock
}

// Spawn takes the lock shared, for children that Delve does not trace,
// and returns its release.
func Spawn() (release func()) {
	lock.RLock()
	return lock.RUnlock
}
