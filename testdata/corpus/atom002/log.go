// Package atom002 follows atom002 of the Fusion and AVFilter benchmarks
// (seed 001 section 6, Table 1; seed 000 Table 3), which mimics the Apache
// web server's buffered log (the bug AVIO calls Apache #25520): a writer
// reads the buffer's fill count, copies its entry there, and stores the
// new count, in two critical sections. Two writers can read the same
// count: the second entry overwrites the first, and the count misses one.
//
// Ground truth: a real atomicity violation on l.n (R-W-W: a write's read
// and store of the count, interleaved by the other write's store).
package atom002

import "sync"

// Log is a fixed-size buffer of log entries.
type Log struct {
	mu  sync.Mutex
	buf [4]string
	n   int
}

// Write appends an entry, flushing the buffer when it is full.
func (l *Log) Write(entry string) {
	l.mu.Lock()
	n := l.n
	l.mu.Unlock()
	if n == len(l.buf) {
		n = 0 // flushed
	}
	l.mu.Lock()
	l.buf[n] = entry
	l.n = n + 1
	l.mu.Unlock()
}

// Entries returns the buffered entries.
func (l *Log) Entries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.buf[:l.n]...)
}
