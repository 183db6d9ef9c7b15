package main

import (
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/avcheck/avcheck/dynamic/report"
)

// version is avcheck's version as the build recorded it: the module
// version for "go install ...@version", otherwise "(devel)" with the VCS
// revision when there is one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := bi.Main.Version
	if v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel+" + s.Value[:12]
		}
	}
	return "devel"
}

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
