package children

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/pkg/proc/native"
)

// ErrPtrace is returned when the system does not allow avcheck to trace
// the program.
var ErrPtrace = errors.New("the system does not permit ptrace: allow it with 'sysctl kernel.yama.ptrace_scope=0', or run with CAP_SYS_PTRACE (docker: --cap-add=SYS_PTRACE)")

// Launch starts binary under Delve in dir, holding the lock exclusively
// (Trace), with its standard output and error copied to out (nil
// discards them). Once it returns no error, end must be called: it kills
// the program, waits until its output is copied, and releases the lock.
func Launch(binary string, args []string, dir string, out io.Writer) (grp *proc.TargetGroup, end func(), err error) {
	if out == nil {
		out = io.Discard
	}
	var copying sync.WaitGroup
	pipe := func() (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		copying.Add(1)
		go func() {
			defer copying.Done()
			_, _ = io.Copy(out, r)
			r.Close()
		}()
		return w, nil
	}
	stdout, err := pipe()
	if err != nil {
		return nil, nil, err
	}
	stderr, err := pipe()
	if err != nil {
		stdout.Close()
		copying.Wait()
		return nil, nil, err
	}
	release := Trace()
	cmd := append([]string{binary}, args...)
	grp, err = native.Launch(cmd, dir, 0, nil, "", "", proc.OutputRedirect{File: stdout}, proc.OutputRedirect{File: stderr})
	// Launch passes the write ends to the child and closes its own copies;
	// closing again only guards the error paths.
	stdout.Close()
	stderr.Close()
	if err != nil {
		copying.Wait()
		release()
		if strings.Contains(err.Error(), "operation not permitted") {
			return nil, nil, ErrPtrace
		}
		return nil, nil, fmt.Errorf("launching %s: %w", binary, err)
	}
	return grp, func() {
		// Killing the child is the one thing that must always happen.
		_ = grp.Detach(true)
		copying.Wait()
		release()
	}, nil
}
