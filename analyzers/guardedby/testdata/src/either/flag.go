package either

import (
	"sync"
	"time"
)

// Rec is read through staleUnsafe by Store's get, whose callers hold
// Store's lock or ask getWith to take it (lock == true); get refreshes a
// record, which writes it, only when asked to (touch == true), which
// Snapshot, holding only the read lock, does not. Every write of exp
// holds Store's lock. Not reported.
type Rec struct {
	mu  sync.RWMutex
	exp time.Time
}

func (r *Rec) refresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exp = time.Now().Add(time.Minute)
}

func (r *Rec) Stale() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.staleUnsafe()
}

func (r *Rec) Exp() time.Time {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.exp
}

func (r *Rec) staleUnsafe() bool { return r.exp.Before(time.Now()) }

type Store struct {
	mu   sync.RWMutex
	recs map[string]*Rec
}

func (s *Store) get(k string, touch bool) *Rec {
	r := s.recs[k]
	if r == nil || r.staleUnsafe() {
		return nil
	}
	if touch {
		r.refresh()
	}
	return r
}

func (s *Store) getWith(k string, lock bool) *Rec {
	if lock {
		s.mu.Lock()
	}
	r := s.get(k, true)
	if lock {
		s.mu.Unlock()
	}
	return r
}

func (s *Store) Get(k string) *Rec { return s.getWith(k, true) }

func (s *Store) GetOrAdd(k string) *Rec {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.getWith(k, false); r != nil {
		return r
	}
	r := &Rec{}
	r.refresh()
	s.recs[k] = r
	return r
}

func (s *Store) Snapshot() []*Rec {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Rec
	for k := range s.recs {
		if r := s.get(k, false); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// Doc is Rec with a caller that passes lock == false without holding
// Shelf's lock: its read can run with a refresh.
type Doc struct {
	mu  sync.RWMutex
	exp time.Time
}

func (d *Doc) refresh() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.exp = time.Now().Add(time.Minute)
}

func (d *Doc) Exp() time.Time {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.exp
}

func (d *Doc) staleUnsafe() bool {
	return d.exp.Before(time.Now()) // want `d.exp is accessed without d.mu, which guards it \(held at 2 of its 3 accesses\)`
}

type Shelf struct {
	mu   sync.Mutex
	docs map[string]*Doc
}

func (s *Shelf) get(k string) *Doc {
	d := s.docs[k]
	if d == nil || d.staleUnsafe() {
		return nil
	}
	d.refresh()
	return d
}

func (s *Shelf) getWith(k string, lock bool) *Doc {
	if lock {
		s.mu.Lock()
	}
	d := s.get(k)
	if lock {
		s.mu.Unlock()
	}
	return d
}

func (s *Shelf) Get(k string) *Doc { return s.getWith(k, true) }

// Peek forgets the lock.
func (s *Shelf) Peek(k string) *Doc { return s.getWith(k, false) }
