// Package startup updates shared state while the program is starting,
// before any goroutine that could interleave exists.
package startup

import (
	"sync"
	"testing"
)

var (
	envMu sync.Mutex
	env   = map[string]string{}
)

func Getenv(k string) string {
	envMu.Lock()
	defer envMu.Unlock()
	return env[k]
}

func Setenv(k, v string) {
	envMu.Lock()
	defer envMu.Unlock()
	env[k] = v
}

// init runs before main, in the only goroutine there is.
func init() {
	v := Getenv("DEBUG")
	Setenv("DEBUG", v+",x")
}

// init may start a goroutine, which can run between what follows.
func init() {
	go Setenv("DEBUG", "")
	v := Getenv("DEBUG") // want `env\[\] is read by Getenv\("DEBUG"\) and written in two critical sections of envMu; the update can be lost`
	Setenv("DEBUG", v+",y")
}

// TestMain runs before any test until it calls m.Run.
func TestMain(m *testing.M) {
	if Getenv("PID") == "" {
		Setenv("PID", "1")
	}
	runMain(m)
}

func runMain(m *testing.M) int {
	v := Getenv("MODE")
	Setenv("MODE", v+",t")
	code := m.Run()
	v = Getenv("MODE") // want `env\[\] is read by Getenv\("MODE"\) and written in two critical sections of envMu; the update can be lost`
	Setenv("MODE", v+",done")
	return code
}

// Configure is an ordinary function: its callers may run concurrently.
func Configure() {
	v := Getenv("DEBUG") // want `env\[\] is read by Getenv\("DEBUG"\) and written in two critical sections of envMu; the update can be lost`
	Setenv("DEBUG", v+",z")
}

var (
	listenMu sync.Mutex
	conns    []string
)

// serve is a goroutine that touches only conns, never env.
func serve() {
	listenMu.Lock()
	conns = append(conns, "c")
	listenMu.Unlock()
}

// TestMain's goroutine serve cannot reach env, so env's update before
// m.Run is still made alone; conns's is not.
func TestMainServer(m *testing.M) {
	go serve()
	v := Getenv("SERVE")
	Setenv("SERVE", v+",s")
	listenMu.Lock()
	c := conns // want `conns is read and written in two critical sections of listenMu; the update can be lost`
	listenMu.Unlock()
	listenMu.Lock()
	conns = append(c, "m")
	listenMu.Unlock()
	m.Run()
}
