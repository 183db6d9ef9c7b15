package main

import (
	"fmt"
	"os"
)

// runRecord is "avcheck run". The Delve-driven recorder is not built yet;
// it says so rather than pretend.
func runRecord([]string) int {
	fmt.Fprintln(os.Stderr, "avcheck run: the Delve recorder is not built yet; record a trace by other means and use 'avcheck predict'")
	return 1
}
