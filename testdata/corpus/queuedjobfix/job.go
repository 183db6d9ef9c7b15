// Package queuedjobfix is package queuedjob fixed: the job is marked
// queued before it is sent, while it is still Submit's own.
//
// Ground truth: no race, no atomicity violation.
package queuedjobfix

import "sync"

// Job is a unit of work.
type Job struct {
	mu    sync.Mutex
	state string
}

// State returns the job's state.
func (j *Job) State() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state
}

// Work runs the queued jobs.
func Work(q <-chan *Job, done chan<- struct{}) {
	for j := range q {
		j.mu.Lock()
		j.state = "running"
		j.mu.Unlock()
	}
	close(done)
}

// Submit marks a new job queued, then queues it.
func Submit(q chan<- *Job) *Job {
	j := &Job{state: "new"}
	j.state = "queued"
	q <- j
	return j
}
