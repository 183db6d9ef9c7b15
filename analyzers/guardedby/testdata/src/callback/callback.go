// Package callback keeps closures in fields of function type and calls
// them from its methods.
package callback

import "sync"

type Rows struct {
	mu     sync.Mutex
	err    error
	closed bool
	// cancel is called by close, with mu held.
	cancel func()
}

func (r *Rows) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Rows) Fail(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

func (r *Rows) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.cancel != nil {
		r.cancel()
	}
}

func (r *Rows) Close() { r.close() }

// Chain installs a callback that reads r.err: it runs only from close,
// with r.mu held, and chains the callback it replaces.
func Chain(r *Rows, report func(error)) {
	parent := r.cancel
	r.cancel = func() {
		report(r.err)
		if parent != nil {
			parent()
		}
	}
}

type Job struct {
	mu    sync.Mutex
	state int
	done  func()
}

func (j *Job) State() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state
}

func (j *Job) Set(s int) {
	j.mu.Lock()
	j.state = s
	j.mu.Unlock()
}

func (j *Job) finish() {
	j.mu.Lock()
	j.done()
	j.mu.Unlock()
}

// Finish calls the callback once more without the lock.
func (j *Job) Finish() {
	j.finish()
	j.done()
}

// OnDone's callback runs once with the lock and once without.
func OnDone(j *Job, report func(int)) {
	j.done = func() {
		report(j.state) // want `j.state is accessed without j.mu, which guards it \(held at 2 of its 3 accesses\)`
	}
}

type Task struct {
	mu   sync.Mutex
	n    int
	stop func()
}

func (t *Task) N() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

func (t *Task) Add() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

func (t *Task) halt() {
	t.mu.Lock()
	t.stop()
	t.mu.Unlock()
}

func (t *Task) Halt() { t.halt() }

// Detach hands the callback to another goroutine, which calls it
// without the lock: the package no longer sees every call.
func (t *Task) Detach() {
	go t.stop()
}

func OnStop(t *Task, report func(int)) {
	t.stop = func() {
		report(t.n) // want `t.n is accessed without t.mu, which guards it \(held at 2 of its 3 accesses\)`
	}
}
