package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress shows on a terminal what avcheck run is doing: one line, the
// stage, its counts and its time, rewritten in place twice a second.
// Everything else written to the terminal meanwhile (the recorded
// program's output, avcheck's messages) goes through Write, which clears
// the line, writes, and draws the line again below. A nil *progress,
// which newProgress returns when w is not a terminal, shows nothing and
// writes through to w: tests and CI logs get no progress.
type progress struct {
	cmd   string // the command the line names
	w     io.Writer
	width int // of the line: one less than the terminal's
	stop  chan struct{}
	done  sync.WaitGroup
	close sync.Once

	mu      sync.Mutex
	stage   string
	counts  func() string // the stage's counts, or nil
	hint    string        // what Ctrl-C does, say
	start   time.Time     // of the stage
	drawn   bool          // the line is on the terminal
	midLine bool          // the last Write did not end its line
}

// newProgress returns the progress line of command cmd on w, or nil if w
// is not a terminal.
func newProgress(w io.Writer, cmd string) *progress {
	if !isTerminal(w) {
		return nil
	}
	p := &progress{cmd: cmd, w: w, width: terminalWidth(w.(*os.File)) - 1, stop: make(chan struct{})}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

// Stage shows a new stage, with counts (nil for none) called at every
// redraw, and a hint after the time.
func (p *progress) Stage(stage string, counts func() string, hint string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage, p.counts, p.hint, p.start = stage, counts, hint, time.Now()
	p.draw()
}

// Write writes b above the progress line.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	n, err := p.w.Write(b)
	p.midLine = len(b) > 0 && b[len(b)-1] != '\n'
	p.draw()
	return n, err
}

// Close removes the progress line for good; Write still writes.
func (p *progress) Close() {
	if p == nil {
		return
	}
	p.close.Do(func() { close(p.stop) })
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	if p.midLine {
		fmt.Fprintln(p.w)
	}
	p.stage = ""
}

// draw writes the line, unless a line of other output is unfinished.
func (p *progress) draw() {
	if p.stage == "" || p.midLine {
		return
	}
	var line bytes.Buffer
	fmt.Fprintf(&line, "\r\x1b[K%s: %s", p.cmd, p.stage)
	if p.counts != nil {
		if c := p.counts(); c != "" {
			fmt.Fprintf(&line, ", %s", c)
		}
	}
	fmt.Fprintf(&line, ", %s", time.Since(p.start).Round(time.Second))
	if p.hint != "" {
		fmt.Fprintf(&line, " (%s)", p.hint)
	}
	// A line longer than the terminal would wrap, and "\r" would then
	// rewrite only its last row.
	if r := []rune(line.String()); len(r) > p.width+len("\r\x1b[K") {
		line.Reset()
		line.WriteString(string(r[:p.width+len("\r\x1b[K")]))
	}
	_, _ = p.w.Write(line.Bytes())
	p.drawn = true
}

// clear erases the line, if drawn.
func (p *progress) clear() {
	if p.drawn {
		_, _ = io.WriteString(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// output returns where to write what must not be drawn over: p, or w
// without a progress line.
func (p *progress) output(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return p
}

// isTerminal reports whether w is a terminal: a character device other
// than the null device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
