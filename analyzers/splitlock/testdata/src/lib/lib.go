package lib

import "sync"

type Config struct {
	Limit int
	Name  string
}

type Server struct {
	mu  sync.Mutex
	cfg Config
}

func (s *Server) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func (s *Server) SetConfig(c Config) {
	s.mu.Lock()
	s.cfg = c
	s.mu.Unlock()
}

// Update is the atomic alternative: one critical section.
func (s *Server) Update(f func(*Config)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.cfg)
}

type Conn struct{ ID int }

type Pool struct {
	mu  sync.Mutex
	cur *Conn
}

func (p *Pool) Current() *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

func (p *Pool) Install(c *Conn) {
	p.mu.Lock()
	p.cur = c
	p.mu.Unlock()
}

// InstallIfEmpty is the atomic check-then-act.
func (p *Pool) InstallIfEmpty(c *Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		p.cur = c
	}
}

type Account struct {
	mu  sync.Mutex
	bal int
}

func (a *Account) Balance() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bal
}

func (a *Account) Add(d int) {
	a.mu.Lock()
	a.bal += d
	a.mu.Unlock()
}

type Cache struct {
	mu sync.RWMutex
	m  map[string]int
}

func (c *Cache) Get(k string) (int, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *Cache) Set(k string, v int) {
	c.mu.Lock()
	c.m[k] = v
	c.mu.Unlock()
}

// SetIfAbsent re-checks under the write lock.
func (c *Cache) SetIfAbsent(k string, v int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		c.m[k] = v
	}
}

type Queue struct {
	mu    sync.Mutex
	items []int
}

func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

func (q *Queue) Front() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.items[0]
}

func (q *Queue) PopFront() {
	q.mu.Lock()
	q.items = q.items[1:]
	q.mu.Unlock()
}

func (q *Queue) Push(v int) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
}
