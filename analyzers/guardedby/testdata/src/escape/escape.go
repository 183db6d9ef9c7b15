package escape

import "sync"

// A job is its function's own until it is sent; after that it is shared.
type Job struct {
	mu    sync.Mutex
	state string
}

func (j *Job) State() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state
}

func Work(q <-chan *Job) {
	for j := range q { // a received job is shared
		j.mu.Lock()
		j.state = "running"
		j.mu.Unlock()
	}
}

func Submit(q chan<- *Job) {
	j := &Job{}
	j.state = "new" // still Submit's own: not counted or reported
	q <- j
	j.state = "queued" // want `j.state is accessed without j.mu, which guards it \(held at 2 of its 3 accesses\)`
}

// A constructor's result is the caller's own until it escapes.
type Tracker struct {
	mu      sync.Mutex
	pending int
}

func NewTracker() *Tracker { return &Tracker{} }

func (t *Tracker) Reset() {
	t.mu.Lock()
	t.pending = 0
	t.mu.Unlock()
}

func (t *Tracker) Done() {
	t.mu.Lock()
	t.pending--
	t.mu.Unlock()
}

func (t *Tracker) Add() {
	t.mu.Lock()
	t.pending++
	t.mu.Unlock()
}

func (t *Tracker) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

func Start() int {
	t := NewTracker()
	t.pending = 1 // not yet shared: not reported
	go t.Add()
	return t.pending // want `t.pending is accessed without t.mu, which guards it \(held at 4 of its 6 accesses\)`
}

// Kept passes the tracker to a function that stores it in shared state.
var registry []*Tracker

func register(t *Tracker) { registry = append(registry, t) }

func Kept() int {
	t := NewTracker()
	t.pending = 2 // not reported
	register(t)
	return t.pending // want `t.pending is accessed without t.mu`
}
