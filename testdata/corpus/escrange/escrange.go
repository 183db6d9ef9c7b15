// Package escrange has the shape of a bug that issue reports of
// Kubernetes controllers show again and again: a loop starts a goroutine
// per item that reads the item, then goes on to change the item itself.
// The loop variable is the loop's own, but the goroutine reaches it.
//
// Ground truth: a data race on it.Name, between the goroutine's read and
// the loop's write.
package escrange

import (
	"strings"
	"sync"
)

// Item is a work item.
type Item struct {
	Name string
}

// Notify starts one goroutine per item that logs its name, then marks the
// item sent, racing with the goroutine that reads it.
func Notify(items []Item, log func(string)) {
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			log(strings.ToUpper(it.Name))
		}()
		it.Name = it.Name + " (sent)"
	}
	wg.Wait()
}
