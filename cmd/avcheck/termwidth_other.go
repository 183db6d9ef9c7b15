//go:build !unix

package main

import "os"

// terminalWidth is the number of columns of the terminal f: 80.
func terminalWidth(*os.File) int { return 80 }
