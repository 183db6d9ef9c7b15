// Package selectsend hands a value over in a select's send case, as a
// pool does when it creates a resource for a waiting caller: the send
// and its receive order the creator's writes before the caller's reads,
// so nothing races.
package selectsend

import (
	"context"
	"sync"
	"testing"
)

type resource struct {
	value, status int
}

func (r *resource) get() int {
	if r.status != 1 {
		panic("not acquired")
	}
	return r.value
}

type pool struct{ mu sync.Mutex }

func (p *pool) acquire(ctx context.Context) (*resource, error) {
	res := &resource{}
	ch := make(chan error)
	go func() {
		p.mu.Lock()
		res.value = 42
		res.status = 1
		p.mu.Unlock()
		select {
		case ch <- nil:
		case <-ctx.Done():
		}
	}()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case err := <-ch:
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

func TestAcquire(t *testing.T) {
	var p pool
	for i := 0; i < 3; i++ {
		r, err := p.acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.get() != 42 {
			t.Fatal("wrong value")
		}
	}
}
