// Package blanktouch reads a shared variable into the blank identifier,
// a shape left behind by refactorings and by code that "uses" a value to
// keep a compiler quiet: Healthy once logged the current configuration;
// the read stayed, without the lock that Set holds to replace it.
//
// Ground truth: a data race on current (Healthy's unlocked read against
// Set's locked write); no atomicity violation.
package blanktouch

import "sync"

// Config is a server's configuration.
type Config struct {
	Addr string
}

var (
	mu      sync.Mutex
	current = &Config{Addr: ":8080"}
)

// Set replaces the current configuration.
func Set(c *Config) {
	mu.Lock()
	current = c
	mu.Unlock()
}

// Healthy reports whether the server is up.
func Healthy() bool {
	_ = current
	return true
}
