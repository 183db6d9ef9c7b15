package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// version is avcheck's version as the build recorded it: the module
// version for "go install ...@version", otherwise "devel", with the VCS
// revision when the build recorded one ("devel+0123456789ab", and
// "+dirty" when the checkout had changes).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.modified" && s.Value == "true" && v != "devel" {
			v += "+dirty"
		}
	}
	return v
}

// versionFlag reports whether arg is the -V flag: -V, -V=full, or -V
// with another value (an error versionMain reports).
func versionFlag(arg string) bool {
	name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
	return strings.HasPrefix(arg, "-") && name == "V"
}

// versionMain is "avcheck -V": the version, for people; and
// "avcheck -V=full", which go vet runs to key its cache with the tool:
// "avcheck version VERSION buildID=HASH", where HASH is the SHA-256 of
// the executable, so that the key changes whenever the binary does
// (cmd/go takes the whole line of a release version as the key, and the
// buildID of a development one, which it requires to end the line).
func versionMain(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: avcheck -V[=full]"
	_, val, hasVal := strings.Cut(args[0], "=")
	if len(args) > 1 {
		fmt.Fprintln(stderr, "avcheck: -V takes no other arguments")
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	switch {
	case !hasVal || val == "true":
		fmt.Fprintf(stdout, "avcheck version %s\n", version())
		return exitClean
	case val != "full":
		fmt.Fprintf(stderr, "avcheck: -V=%s: want -V or -V=full\n", val)
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	id, err := executableHash()
	if err != nil {
		fmt.Fprintf(stderr, "avcheck: -V=full: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "avcheck version %s buildID=%s\n", version(), id)
	return exitClean
}

// executableHash is the SHA-256 of the running executable, in hex.
func executableHash() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", exe, err)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}
