// Command allocreuse runs two workers that share nothing: each makes its
// own objects, round after round, uses each from two goroutines, drops it
// and collects garbage. The second starts once the first is done, with
// nothing ordering the two (as nothing orders two parallel tests), so the
// allocator gives its objects the memory of the first's: the recorder
// must see them as new objects, not as the first worker's, whose
// accesses would race with its own.
package main

import (
	"os"
	"runtime"
	"strconv"
	"time"
)

// box is a small stack, not safe for concurrent use, with the values it
// has seen.
type box struct {
	n     int
	items []int
	seen  map[int]bool
	hist  []int
}

func (b *box) push(v int) bool {
	if b.n == len(b.items) {
		return false
	}
	b.items[b.n] = v
	b.n++
	b.seen[v] = true
	b.hist = append(b.hist, 0)
	b.hist[len(b.hist)-1] = v
	return true
}

// tally sums values, and keeps the sum at each, the last value and the
// name of the last.
type tally struct {
	sum  int
	at   map[int]int
	last []int
	name []byte
}

func (t *tally) add(v int) {
	t.sum = t.sum + v
	t.at[v] = t.sum
	t.last[0] = v
	t.name[0] = byte('0' + v%10)
}

// round makes a box, its items and map and a tally and its map, and uses
// them from a
// goroutine, then, once it is done, from its own.
func round(i int) int {
	b := &box{items: make([]int, 2), seen: make(map[int]bool)}
	t := &tally{at: map[int]int{}, last: []int{0}, name: []byte(strconv.Itoa(i))}
	done := make(chan struct{})
	go func() {
		b.push(i)
		t.add(i)
		close(done)
	}()
	<-done
	b.push(i)
	t.add(i)
	return t.sum
}

func worker(rounds int, done chan<- int) {
	sum := 0
	for i := range rounds {
		sum += round(i)
		runtime.GC()
	}
	done <- sum
}

func main() {
	rounds := 4
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			rounds = n
		}
	}
	first, second := make(chan int, 1), make(chan int, 1)
	go worker(rounds, first)
	time.Sleep(200 * time.Millisecond)
	runtime.GC()
	go worker(rounds, second)
	if <-first != <-second {
		os.Exit(1)
	}
}
