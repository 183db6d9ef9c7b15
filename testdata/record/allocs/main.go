// Command allocs makes and uses a small object in each of a number of
// iterations, given as its argument, in two goroutines: the recorder's
// benchmark program for allocations (avrt.Made).
package main

import (
	"os"
	"strconv"
	"sync"
)

type point struct{ x, y int }

func main() {
	times := 100
	if len(os.Args) > 1 {
		if n, err := strconv.Atoi(os.Args[1]); err == nil {
			times = n
		}
	}
	sums := make([]int, 2)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range times {
				p := &point{x: i}
				p.y = p.x + 1
				sums[g] += p.y
			}
		}()
	}
	wg.Wait()
}
