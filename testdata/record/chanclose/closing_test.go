package chanclose

import "testing"

// TestRange drains a channel with range; the producer adds after its
// sends and before the close, the consumer after the loop.
func TestRange(t *testing.T) {
	var c Counter
	ch := make(chan int, 4)
	go func() {
		ch <- 1
		ch <- 2
		c.Add(1)
		close(ch)
	}()
	sum := 0
	for v := range ch {
		sum += v
	}
	c.Add(2)
	if sum != 3 || c.n != 3 {
		t.Errorf("sum %d, count %d; want 3 and 3", sum, c.n)
	}
}
