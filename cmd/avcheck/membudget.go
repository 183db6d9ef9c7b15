package main

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
)

// memBudget shares memory among the predictions that avcheck test runs at
// once. Each package's recording is converted into a trace and predicted
// on in avcheck test's own process, at about predictBytesPerEvent bytes
// per event (docs/predict.md: 100 to 500 by the trace's shape; 280 on a
// worker pool's tests), so that -p packages of 20M events each
// (-max-events) could ask for -p times 6 GB at once: the kernel killed the
// whole run, where go test -race would have run. A prediction first
// reserves its estimate, and waits while the others hold the budget; one
// alone may always run, whatever its estimate. The recordings themselves
// (the test binaries) still run -p at a time.
type memBudget struct {
	mu    sync.Mutex
	total int64
	used  int64
	freed chan struct{} // closed, and replaced, at each release
}

// predictBytesPerEvent is what a prediction is taken to need per event
// of its trace, for memBudget.
const predictBytesPerEvent = 300

// newMemBudget returns a budget of total bytes.
func newMemBudget(total int64) *memBudget {
	return &memBudget{total: total, freed: make(chan struct{})}
}

// acquire reserves n bytes (at most the whole budget), waiting until
// they are free or ctx is done, and returns the function that gives them
// back (once, however often it is called). Whatever is held, the first
// reservation may always go on, so that one prediction larger than the
// budget runs alone rather than never.
func (b *memBudget) acquire(ctx context.Context, n int64) (release func(), err error) {
	n = max(min(n, b.total), 0)
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= b.total {
			b.used += n
			b.mu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					b.mu.Lock()
					b.used -= n
					close(b.freed)
					b.freed = make(chan struct{})
					b.mu.Unlock()
				})
			}, nil
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return func() {}, ctx.Err()
		}
	}
}

// predictionBudget is the memory avcheck test's predictions share: half
// of the machine's memory (MemTotal in /proc/meminfo), the rest being
// left to the test binaries, the go command and everything else; 8 GiB
// where the machine does not say.
func predictionBudget() int64 {
	if total := memTotal("/proc/meminfo"); total > 0 {
		return total / 2
	}
	return 8 << 30
}

// memTotal returns the MemTotal of a meminfo file in bytes, 0 if it
// cannot be read.
func memTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
