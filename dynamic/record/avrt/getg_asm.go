//go:build amd64 || arm64

package avrt

import "unsafe"

// getg returns the calling goroutine's g.
func getg() unsafe.Pointer
