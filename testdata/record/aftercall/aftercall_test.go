// Package aftercall writes shared variables with the results of calls
// and receives that synchronise: each write happens once its call or
// receive returned, ordered after the other goroutine's write by it.
// Only racy's two writes are unordered.
package aftercall

import "testing"

var (
	ready = make(chan int)
	v, w  int
	x     int
)

func take() int { return <-ready }

func compute() int { return 3 }

// The goroutine's write of v follows the receive in take.
func TestCall(t *testing.T) {
	done := make(chan bool)
	go func() {
		v = take()
		done <- true
	}()
	v = 1
	ready <- 2
	<-done
}

// The goroutine's write of w follows its receive.
func TestReceive(t *testing.T) {
	done := make(chan bool)
	go func() {
		w = <-ready
		done <- true
	}()
	w = 1
	ready <- 2
	<-done
}

// Nothing orders the two writes of x: a race.
func TestRacy(t *testing.T) {
	done := make(chan bool)
	go func() {
		x = compute()
		done <- true
	}()
	x = 1
	<-done
}
