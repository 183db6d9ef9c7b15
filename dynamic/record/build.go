package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/avcheck/avcheck/internal/children"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// BuildError is a failed build; Output is the go command's own output.
type BuildError struct {
	Output string
}

// Error returns the compiler's messages, one per line, without the go
// command's framing around them (the "# package" header and the FAIL
// lines of go test), or the whole output if it has nothing else.
func (e *BuildError) Error() string {
	var msgs []string
	for line := range strings.SplitSeq(strings.TrimRight(e.Output, "\n"), "\n") {
		if strings.HasPrefix(line, "# ") || line == "FAIL" || strings.HasPrefix(line, "FAIL\t") {
			continue
		}
		msgs = append(msgs, line)
	}
	if len(msgs) == 0 {
		return strings.TrimRight(e.Output, "\n")
	}
	return strings.Join(msgs, "\n")
}

// Build compiles pkg (a package pattern resolving to one package) in dir
// without optimisation or inlining, so that every source line and variable
// is visible to the debugger: a test binary with "go test -c", or the
// program itself when the package is a main package with no test. It
// returns the binary and a function that removes the temporary directory
// holding it, which the caller must always call. With a plan, the files
// whose blank assignments it rewrites (Plan.Keeps) are compiled from their
// rewritten copies; plan may be nil.
func Build(ctx context.Context, dir, pkg string, isMain bool, plan *Plan) (bin string, cleanup func(), err error) {
	defer children.Spawn()()
	tmp, err := os.MkdirTemp("", "avcheck-run-")
	if err != nil {
		return "", func() {}, err
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	// Into a directory, the go command names the binary as it does in
	// the current one: PKG.test for a test, the command's name for a
	// program, which is how the program's output and a process list
	// name it. Its own work directory is in tmp too (GOTMPDIR): an
	// interrupted go command leaves it behind, and cleanup removes it.
	binDir, workDir := filepath.Join(tmp, "bin"), filepath.Join(tmp, "work")
	for _, d := range []string{binDir, workDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			cleanup()
			return "", func() {}, err
		}
	}
	overlay, err := writeOverlay(tmp, plan)
	if err != nil {
		cleanup()
		return "", func() {}, err
	}
	flags := []string{"-gcflags=all=-N -l"}
	if plan != nil {
		flags = append(flags, plan.BuildFlags...)
	}
	if overlay != "" {
		flags = append(flags, "-overlay="+overlay)
	}
	bin, err = goBuild(ctx, dir, pkg, isMain, binDir, workDir, flags)
	if err != nil {
		cleanup()
		return "", func() {}, err
	}
	return bin, cleanup, nil
}

// Check compiles pkg in dir with the build tags tags (comma-separated,
// as go test -tags takes them), as go test does a package without test
// files, and keeps nothing: a *BuildError if it does not compile.
func Check(ctx context.Context, dir, pkg, tags string) error {
	defer children.Spawn()()
	workDir, err := os.MkdirTemp("", "avcheck-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(workDir)
	args := append(append([]string{"build"}, TagFlags(tags)...), "-o", os.DevNull, pkg)
	cmd, output := goCommand(ctx, dir, workDir, args...)
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &BuildError{Output: output.String()}
		}
		return fmt.Errorf("go build: %w", err)
	}
	return nil
}

// TagFlags returns the go command's flags that give it the build tags
// tags, comma-separated as go test -tags takes them: none if tags is
// empty.
func TagFlags(tags string) []string {
	if tags == "" {
		return nil
	}
	return []string{"-tags=" + tags}
}

// goCommand returns the go command with args, run in dir with its work
// directory in workDir, interruptible, and the buffer its output goes to.
func goCommand(ctx context.Context, dir, workDir string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, "go", args...)
	interruptible(cmd)
	cmd.Env = append(os.Environ(), "GOTMPDIR="+workDir)
	cmd.Dir = dir
	output := new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = output, output
	return cmd, output
}

// goBuild runs go test -c (go build for a program) of pkg into binDir,
// with the go command's work directory in workDir, and returns the
// binary.
func goBuild(ctx context.Context, dir, pkg string, isMain bool, binDir, workDir string, flags []string) (string, error) {
	out := binDir + string(filepath.Separator)
	flags = append(slices.Clip(flags), "-o", out)
	args := append(append([]string{"test", "-c"}, flags...), pkg)
	if isMain {
		args = append(append([]string{"build"}, flags...), pkg)
	}
	cmd, output := goCommand(ctx, dir, workDir, args...)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if killedByInterrupt(ee) {
				// A Ctrl-C that reached the go command as it started,
				// before it had its own process group, reaches avcheck
				// too: give its handler the time to end the stage.
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(time.Second):
				}
			}
			return "", &BuildError{Output: output.String()}
		}
		return "", fmt.Errorf("go %s: %w", args[0], err)
	}
	entries, err := os.ReadDir(binDir)
	if err != nil || len(entries) != 1 {
		// go test -c writes nothing for a package without test files.
		return "", fmt.Errorf("%s has no test files to run", pkg)
	}
	return filepath.Join(binDir, entries[0].Name()), nil
}
