package escape

import (
	"sort"
	"sync"
	"time"
)

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

// A tally given to a timer's function is shared once the timer has it:
// the timer runs the function on a goroutine of its own. One given to
// sort.Slice's less is not: sort.Slice calls less before it returns.
type Tally struct {
	mu sync.Mutex
	n  int
}

func (t *Tally) Inc() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

func (t *Tally) Get() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

func (t *Tally) Reset() {
	t.mu.Lock()
	t.n = 0
	t.mu.Unlock()
}

func Timed() int {
	t := &Tally{}
	t.n = 3 // not reported
	time.AfterFunc(time.Second, t.Inc)
	time.AfterFunc(time.Second, func() { t.Reset() })
	return t.n // want `t.n is accessed without t.mu, which guards it \(held at 3 of its 4 accesses\)`
}

func Sorted(xs []int) int {
	t := &Tally{}
	sort.Slice(xs, func(i, j int) bool {
		t.Inc()
		return xs[i] < xs[j]
	})
	return t.n // not reported
}
