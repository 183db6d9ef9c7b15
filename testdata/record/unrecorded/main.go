// Command unrecorded makes accesses that the recorder does not record:
// a local variable's first write, before a goroutine captures it (from
// there on it is shared and recorded), in a function the run enters, and
// another in a function it never calls.
package main

import (
	"fmt"
	"sync"
)

var total int

func count() int {
	n := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n++
	}()
	wg.Wait()
	total = n
	return n
}

func never() int {
	m := 0
	f := func() { m++ }
	f()
	return m
}

var mu sync.Mutex

// locked reads total under mu. Its return statement stores the result
// into a result variable, since it defers a call: code the compiler
// makes, which is not listed.
func locked() int {
	mu.Lock()
	defer mu.Unlock()
	return total
}

func main() {
	if len(fmt.Sprint(count(), locked())) == 0 {
		fmt.Println(never())
	}
}
