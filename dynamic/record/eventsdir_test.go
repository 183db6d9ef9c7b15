//go:build unix

package record

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/avcheck/avcheck/dynamic/record/avrt"
)

// TestEventsDir checks where the raw events of a recording go: to the
// memory file system when TMPDIR names no other place and it has room
// for four times the file, else to the temporary directory.
func TestEventsDir(t *testing.T) {
	mem := t.TempDir()
	defer func(old string) { memDir = old }(memDir)
	memDir = mem
	free, ok := freeBytes(mem)
	if !ok {
		t.Skip("free space not known here")
	}
	fits := free / 4 / int64(avrt.EventSize) / 2
	t.Setenv("TMPDIR", "")
	if got := eventsDir(fits); got != mem {
		t.Errorf("TMPDIR unset, room for the file: %s, want %s", got, mem)
	}
	if got := eventsDir(free); got != os.TempDir() {
		t.Errorf("TMPDIR unset, no room: %s, want %s", got, os.TempDir())
	}
	memDir = filepath.Join(mem, "absent")
	if got := eventsDir(fits); got != os.TempDir() {
		t.Errorf("no memory file system: %s, want %s", got, os.TempDir())
	}
	memDir = mem
	other := t.TempDir()
	t.Setenv("TMPDIR", other)
	if got := eventsDir(fits); got != other {
		t.Errorf("TMPDIR=%s: %s, want it", other, got)
	}
}

// TestOrphanEvents checks that creating a raw events file removes those
// whose recording process is gone, and only those.
func TestOrphanEvents(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	gone := filepath.Join(dir, fmt.Sprintf("%s%d-1", eventsPrefix, cmd.Process.Pid))
	alive := filepath.Join(dir, fmt.Sprintf("%s%d-2", eventsPrefix, os.Getppid()))
	other := filepath.Join(dir, eventsPrefix+"x")
	for _, f := range []string{gone, alive, other} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	name, err := createEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{gone: false, alive: true, other: true, name: true}
	for f, kept := range want {
		if _, err := os.Stat(f); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", filepath.Base(f), err == nil, kept)
		}
	}
	if filepath.Dir(name) != dir {
		t.Errorf("created %s, not in %s", name, dir)
	}
}
