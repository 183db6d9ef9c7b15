//go:build !unix

package record

// freeBytes is not known on this system.
func freeBytes(string) (int64, bool) { return 0, false }
