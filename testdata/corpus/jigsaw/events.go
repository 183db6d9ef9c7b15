// Package jigsaw follows the Jigsaw web server bug of PECAN's Fig. 7
// (seed 003 section 8.3): EventManager.getNextEvent waits until the event
// queue is not empty (line 1), takes its first event (line 2) and removes
// it (line 3), each step one synchronised call of the queue. Two
// goroutines in getNextEvent can both see a non-empty queue and both take
// the same first event; with one event left, the second one's take fails
// (Java's ArrayIndexOutOfBoundsException, here an index-out-of-range
// panic).
//
// Ground truth: a real atomicity violation on q.events (R-W-R: the check or
// the take, interleaved by the other goroutine's removal).
package jigsaw

import "sync"

// Queue is a synchronised vector of events.
type Queue struct {
	mu     sync.Mutex
	events []string
}

// Size returns the number of queued events.
func (q *Queue) Size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.events)
}

// ElementAt returns the i-th event.
func (q *Queue) ElementAt(i int) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.events[i]
}

// RemoveElementAt removes the i-th event.
func (q *Queue) RemoveElementAt(i int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.events = append(q.events[:i:i], q.events[i+1:]...)
}

// Add queues an event.
func (q *Queue) Add(e string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.events = append(q.events, e)
}

// EventManager hands out queued events.
type EventManager struct {
	queue Queue
}

// NextEvent is getNextEvent: it waits for an event and takes it.
func (m *EventManager) NextEvent() string {
	for m.queue.Size() == 0 { // 1
	}
	e := m.queue.ElementAt(0)  // 2
	m.queue.RemoveElementAt(0) // 3
	return e
}
