package outside

import (
	"io"
	"testing"
	"time"
)

// TestAfterFunc hands the server to a timer's goroutine, which the
// standard library starts, then sets the limit and signals the handler
// through a pipe, whose synchronisation is the standard library's: the
// handler's read of the limit comes after the write, by an order that
// is not recorded.
func TestAfterFunc(t *testing.T) {
	s := &server{}
	pr, pw := io.Pipe()
	done := make(chan int)
	time.AfterFunc(time.Millisecond, func() {
		var b [1]byte
		if _, err := pr.Read(b[:]); err != nil {
			panic(err)
		}
		v := s.handle()
		done <- v
	})
	s.limit = 3
	if _, err := pw.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != 6 {
		t.Fatalf("handle = %d, want 6", got)
	}
}

// TestParallelRace's goroutine and the test write b.n with nothing
// ordering them. The goroutine's function captures t, which the test
// then records as new memory as it begins (after avrt.TestGo).
func TestParallelRace(t *testing.T) {
	t.Parallel()
	b := &box{}
	done := make(chan struct{})
	go func() {
		b.n = len(t.Name())
		close(done)
	}()
	b.n = 2
	<-done
}
