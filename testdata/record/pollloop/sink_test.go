package pollloop

import (
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	interval := 2 * time.Millisecond
	s := &Sink{}
	done := make(chan int)
	go func() {
		for i := 0; i < 20; i++ {
			s.Add(i)
			time.Sleep(interval / 2)
		}
	}()
	go func() {
		start := time.Now()
		n := 0
		for time.Now().Sub(start) < 10*interval {
			time.Sleep(interval / 4)
			n = s.Len()
		}
		done <- n
	}()
	<-done
}
