package startup

import "testing"

// A test that does not call t.Parallel runs alone: go test runs the
// parallel ones after every other test has finished.
func TestSerial(t *testing.T) {
	v := Getenv("GODEBUG")
	Setenv("GODEBUG", v+",t=1")
}

// After t.Parallel, other parallel tests run at the same time.
func TestParallel(t *testing.T) {
	v := Getenv("GODEBUG")
	Setenv("GODEBUG", v+",a=1")
	t.Parallel()
	v = Getenv("GODEBUG") // want `env\[\] is read by Getenv\("GODEBUG"\) and written in two critical sections of envMu; the update can be lost`
	Setenv("GODEBUG", v+",b=1")
}

// A goroutine the test starts can reach env through Setenv.
func TestGoroutine(t *testing.T) {
	done := make(chan bool)
	go func() {
		Setenv("GODEBUG", "")
		done <- true
	}()
	v := Getenv("GODEBUG") // want `env\[\] is read by Getenv\("GODEBUG"\) and written in two critical sections of envMu; the update can be lost`
	Setenv("GODEBUG", v+",c=1")
	<-done
}

// A benchmark runs alone too.
func BenchmarkSerial(b *testing.B) {
	v := Getenv("GODEBUG")
	Setenv("GODEBUG", v+",d=1")
}

// A helper is an ordinary function: its callers are not known to run
// alone.
func setDebug(s string) {
	v := Getenv("GODEBUG") // want `env\[\] is read by Getenv\("GODEBUG"\) and written in two critical sections of envMu; the update can be lost`
	Setenv("GODEBUG", v+","+s)
}
