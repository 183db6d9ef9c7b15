package main

import (
	"fmt"
	"os"
)

// runPredict is "avcheck predict".
func runPredict([]string) int {
	fmt.Fprintln(os.Stderr, "avcheck predict: not built yet")
	return 1
}
