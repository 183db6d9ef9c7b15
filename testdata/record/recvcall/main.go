// Command recvcall orders two goroutines by receives from channels that
// calls return (as a fake clock's Sleep receives from its After): the
// main goroutine's accesses come after the receives, the workers'
// before their sends, so nothing here races.
package main

import "fmt"

type clock struct {
	tick chan int
	done chan bool
}

// after returns the channel the worker sends on.
func (c *clock) after() <-chan int { return c.tick }

// finished returns the channel the worker closes.
func (c *clock) finished() chan bool { return c.done }

var n, m int

func main() {
	c := &clock{tick: make(chan int), done: make(chan bool)}
	go func() {
		n = 1
		c.tick <- 1
		m = 1
		close(c.done)
	}()
	<-c.after()
	n = n + 1
	_, ok := <-c.finished()
	m = m + 1
	ready := make(chan bool, 1)
	ready <- true
	select {
	case <-ready:
		<-c.finished() // in a case's body, not the case: recorded too
	}
	fmt.Println(n, m, ok)
}
