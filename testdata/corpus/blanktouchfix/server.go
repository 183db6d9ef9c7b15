// Package blanktouchfix is blanktouch fixed: Healthy reads the current
// configuration, into the blank identifier, under the lock that Set holds
// to replace it.
//
// Ground truth: no data race, no atomicity violation.
package blanktouchfix

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
	mu.Lock()
	_ = current
	mu.Unlock()
	return true
}
