//go:build !unix

package record

// processRuns cannot tell on this system: every process is taken to run.
func processRuns(int) bool { return true }
