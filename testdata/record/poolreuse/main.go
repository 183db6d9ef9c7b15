// Command poolreuse hands an object from one goroutine to another through
// a sync.Pool and nothing else: the first gets it, uses it and puts it
// back; the second, started at the same time, sleeps, then gets it back
// from the pool and uses it. The pool orders the two (a Put happens
// before the Get that returns its item), so nothing here races.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

type buf struct {
	n    int
	last int
}

var pool = sync.Pool{New: func() any { return new(buf) }}

// owner is the buffer the first goroutine used, which it writes before
// its Put and the second reads after its Get.
var owner *buf

func use(b *buf, v int) {
	b.n = b.n + 1
	b.last = v
}

func main() {
	// One P: the second goroutine's Get finds the item the first put in
	// its P's cache.
	runtime.GOMAXPROCS(1)
	first, second := make(chan bool, 1), make(chan bool, 1)
	go func() {
		b := pool.Get().(*buf)
		use(b, 1)
		owner = b
		pool.Put(b)
		first <- true
	}()
	go func() {
		time.Sleep(100 * time.Millisecond)
		b := pool.Get().(*buf)
		use(b, 2)
		same := owner == b
		pool.Put(b)
		second <- same
	}()
	<-first
	if !<-second {
		fmt.Println("the pool did not return the first goroutine's buffer")
		os.Exit(2)
	}
}
