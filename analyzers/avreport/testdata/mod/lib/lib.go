// Package lib is written by the goroutines of package use.
package lib

// Total is shared by every caller.
var Total int

// Add updates Total.
func Add(n int) {
	Total += n // want `^lib\.Total: g4's write and g5's write of lib\.Total can run back to back, with no common lock and no happens-before order \(data race W-W\) \(avcheck run: predicted\)$`
}
