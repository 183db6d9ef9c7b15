// Package atom002a is atom002 fixed, as atom002a of the Fusion and
// AVFilter benchmarks (seed 001 section 6, Table 1; seed 000 Table 3): the
// whole write, from reading the fill count to storing it, is one critical
// section.
//
// Ground truth: no atomicity violation.
package atom002a

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
	defer l.mu.Unlock()
	n := l.n
	if n == len(l.buf) {
		n = 0 // flushed
	}
	l.buf[n] = entry
	l.n = n + 1
}

// Entries returns the buffered entries.
func (l *Log) Entries() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.buf[:l.n]...)
}
