package main

import (
	"os"
	"path/filepath"

	"github.com/avcheck/avcheck/dynamic/report"
)

// sourceRoot is the directory SARIF's %SRCROOT% stands for: the top of
// the Git checkout that holds dir, where GitHub code scanning expects
// paths to start, or dir itself outside one.
func sourceRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

// sarifOptions are the SARIF options for a command run in dir, whose
// relative file names are relative to dir.
func sarifOptions(dir string) report.SARIFOptions {
	return report.SARIFOptions{Version: version(), Paths: report.SARIFPaths{Root: sourceRoot(dir), Dir: dir}}
}
