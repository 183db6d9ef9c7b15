// Package queuedjob has the shape of a bug that Docker and Kubernetes
// job queues have shown: a job is put on the work queue, and the code
// that queued it then sets its state, without the lock the worker takes.
// The job was the function's own until the send; after it, the worker
// has it.
//
// Ground truth: a data race on j.state (Submit's write after the send
// against the worker's locked write); the static suite reports the
// unguarded write.
package queuedjob

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

// Submit queues a new job, then marks it queued.
func Submit(q chan<- *Job) *Job {
	j := &Job{state: "new"}
	q <- j
	j.state = "queued"
	return j
}
