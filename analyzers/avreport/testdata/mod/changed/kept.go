// Package changed has a file that changes after the run.
package changed

// Flag is shared.
var Flag bool

// Set writes Flag.
func Set() {
	Flag = true // want `^changed\.Flag: g6's write and g7's write of changed\.Flag can run back to back, with no common lock and no happens-before order \(data race W-W\) \(avcheck run: predicted\)$`
}

// SetAgain's finding has an access in edited.go.
func SetAgain() {
	Flag = true
}
