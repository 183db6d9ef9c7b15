// Package counter holds the accesses of a recorded run's findings.
package counter

import "sync"

// Counter is a count behind a mutex.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Inc splits its update over two critical sections.
func (c *Counter) Inc() {
	c.mu.Lock()
	n := c.n // want `^c\.n: g1 reads then writes c\.n in one region, and g2's write can run between them \(R-W-W\); the update can be lost \(avcheck run: filtered, 2 instances\)$`
	c.mu.Unlock()
	c.mu.Lock()
	c.n = n + 1
	c.mu.Unlock()
}

// Peek reads the count without the lock.
func (c *Counter) Peek() int {
	return c.n // want `^c\.n: g3's read and g2's write of c\.n can run back to back, with no common lock and no happens-before order \(data race R-W\) \(avcheck run: predicted\)$`
}

// Reset's finding is ignored where it is reported.
func (c *Counter) Reset() {
	c.n = 0 //avcheck:ignore the tests reset between runs
}

// Swap's finding lists its first access second.
func (c *Counter) Swap(m int) int {
	c.mu.Lock()
	old := c.n
	c.n = m // want `^c\.n: the recorded run is not conflict-serializable \(R-W-W\) \(avcheck run: replayed\)$`
	c.mu.Unlock()
	return old
}
