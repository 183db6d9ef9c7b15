package chanbuffered

import "testing"

// TestCapacity adds before receiving; the producer adds after its third
// send, which waits for the first receive.
func TestCapacity(t *testing.T) {
	var c Counter
	ch := make(chan int, 2)
	done := make(chan struct{})
	go func() {
		for i := 1; i <= 3; i++ {
			ch <- i
		}
		c.Add(1)
		close(done)
	}()
	c.Add(2)
	sum := 0
	for range 3 {
		sum += <-ch
	}
	<-done
	if sum != 6 || c.n != 3 {
		t.Errorf("sum %d, count %d; want 6 and 3", sum, c.n)
	}
}
