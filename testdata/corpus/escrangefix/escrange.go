// Package escrangefix is package escrange fixed: the goroutine is given
// a copy of the name, and the loop changes the item only after that.
//
// Ground truth: no race, no atomicity violation.
package escrangefix

import (
	"strings"
	"sync"
)

// Item is a work item.
type Item struct {
	Name string
}

// Notify starts one goroutine per item that logs its name, then marks the
// item sent.
func Notify(items []Item, log func(string)) {
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		name := it.Name
		go func() {
			defer wg.Done()
			log(strings.ToUpper(name))
		}()
		it.Name = it.Name + " (sent)"
	}
	wg.Wait()
}
