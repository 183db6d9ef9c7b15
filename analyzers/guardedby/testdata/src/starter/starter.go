package starter

import "sync"

// A Start method sets its receiver up and then starts the goroutine that
// serves it: its writes before the go statement are initialisation.
type Stream struct {
	mu       sync.Mutex
	requests map[int]chan int
	done     chan struct{}
	n        int
}

func (s *Stream) Start() {
	s.requests = make(map[int]chan int)
	s.done = make(chan struct{})
	go s.loop()
}

// StartLiteral starts a function literal that captures the receiver.
func (s *Stream) StartLiteral() {
	s.requests = make(map[int]chan int)
	go func() { s.loop() }()
}

// Restart writes after the goroutine started: the loop can run by then.
func (s *Stream) Restart() {
	go s.loop()
	s.requests = make(map[int]chan int) // want `s.requests is accessed without s.mu, which guards it \(held at 7 of its 10 accesses\)`
}

// Reset starts no goroutine given its receiver: the value may be shared.
func (s *Stream) Reset(ch chan int) {
	s.requests = nil // want `s.requests is accessed without s.mu, which guards it \(held at 7 of its 10 accesses\)`
	go func() { ch <- 1 }()
}

// Locking takes the lock: it is not a Start method, and its write
// before the go statement is reported.
func (s *Stream) Locking() {
	s.requests = nil // want `s.requests is accessed without s.mu, which guards it \(held at 7 of its 10 accesses\)`
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	go s.loop()
}

func (s *Stream) loop() {
	for {
		select {
		case <-s.done:
			return
		default:
		}
		s.mu.Lock()
		for _, ch := range s.requests {
			ch <- s.n
		}
		s.mu.Unlock()
	}
}

func (s *Stream) Add(id int, ch chan int) {
	s.mu.Lock()
	s.requests[id] = ch
	s.n++
	s.mu.Unlock()
}

func (s *Stream) Remove(id int) {
	s.mu.Lock()
	delete(s.requests, id)
	s.mu.Unlock()
}

func (s *Stream) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *Stream) Get(id int) chan int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[id]
}

func (s *Stream) Has(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.requests[id]
	return ok
}
