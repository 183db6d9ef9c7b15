package record

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/avcheck/avcheck/dynamic/record/avrt"
)

// memDir is the memory file system the raw events of a recording go to
// when it has room (eventsDir).
var memDir = "/dev/shm"

// eventsPrefix starts the name of a raw events file, followed by the
// recording process's id and a dash.
const eventsPrefix = "avcheck-events-"

// eventsDir returns the directory of the raw events file of a recording
// of at most limit events. The runtime writes every event into the
// file's pages as it happens (package avrt); on a disk file system the
// kernel then writes those pages back to the disk while the program
// runs, which costs about a third of the recording's speed on two cores
// (docs/run.md). So the file goes to a memory file system (memDir) when
// TMPDIR names no other place and that file system has four times the
// room the file can take; otherwise to the temporary directory, where
// the limit is a quarter of the free space as before.
func eventsDir(limit int64) string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	if st, err := os.Stat(memDir); err != nil || !st.IsDir() {
		return os.TempDir()
	}
	free, ok := freeBytes(memDir)
	if !ok || free/4 < limit*int64(avrt.EventSize) {
		return os.TempDir()
	}
	return memDir
}

// createEvents creates the raw events file of a recording in dir, a file
// of no event (avrt.Header) until the program's runtime starts, named
// after this process, first removing the files of recordings whose
// process is gone (killed before it could remove its own): in a memory
// file system, such a file would hold its memory until the machine
// restarts.
func createEvents(dir string) (string, error) {
	removeOrphanEvents(dir)
	f, err := os.CreateTemp(dir, fmt.Sprintf("%s%d-", eventsPrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	// A program in which no probe runs never starts the runtime.
	name := f.Name()
	_, err = f.Write(avrt.Header())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// removeOrphanEvents removes the raw events files in dir whose recording
// process no longer runs.
func removeOrphanEvents(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, eventsPrefix+"*"))
	for _, name := range names {
		rest := strings.TrimPrefix(filepath.Base(name), eventsPrefix)
		pid, err := strconv.Atoi(rest[:max(strings.IndexByte(rest, '-'), 0)])
		if err != nil || pid <= 0 || processRuns(pid) {
			continue
		}
		_ = os.Remove(name)
	}
}
