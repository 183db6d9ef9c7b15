package avrt

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"
	_ "unsafe" // for go:linkname
)

// procPin pins the calling goroutine to its P and returns the P's id, as
// sync.Pool does; the runtime keeps the symbol for the packages that
// link to it.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// goidOffset is where the runtime's g holds the goroutine id, found by
// calibrate; -1 if it was not found, and the ids come from runtime.Stack.
var goidOffset = -1

// stackKnown says that calibrate found a g's first two words to be the
// bounds of its goroutine's stack (the runtime's g.stack, lo and hi).
var stackKnown bool

// private reports whether address p lies in the calling goroutine's
// stack. A variable there is the goroutine's own: Go never lets another
// goroutine reach it (anything shared is on the heap), which is what
// lets the runtime move a stack as it grows and give its memory to
// another goroutine's stack once it is freed. So its accesses are not
// recorded: they can be in no violation, and an address of a stack that
// moved, taken for the variable of another goroutine that had that
// memory before, would make one up. p is a pointer, not an address, and
// the function does not grow the stack: an address taken before a call
// that moved the stack would be the old stack's.
//
//go:nosplit
//go:nocheckptr
func private(p unsafe.Pointer) bool {
	if !stackKnown {
		return false
	}
	g := getg()
	lo, hi := *(*uintptr)(g), *(*uintptr)(unsafe.Add(g, 8))
	return uintptr(p)-lo < hi-lo
}

// maxGOffset bounds the search for the id in a g.
const maxGOffset = 512

// goid returns the runtime's id of the calling goroutine.
func goid() uint64 {
	if goidOffset >= 0 {
		if g := getg(); g != nil {
			return *(*uint64)(unsafe.Add(g, goidOffset))
		}
	}
	return slowGoid()
}

// slowGoid reads the goroutine's id from the header of its stack trace.
func slowGoid() uint64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// calibrate finds the offset of the goroutine id in the runtime's g: the
// one word offset at which several goroutines' g hold their ids, read
// from their stack traces. The g's layout changes between Go releases;
// this finds it in the one the program was built with.
func calibrate() {
	if getg() == nil {
		return
	}
	// Each of a few goroutines marks the offsets at which its g holds its
	// id; the offset all of them mark is the one.
	const samples = 5
	var marks [maxGOffset / 8]int
	var wg sync.WaitGroup
	bounded := 0 // the goroutines whose g's first two words bound a local
	for k := 0; k < samples; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, g := slowGoid(), getg()
			if id == 0 {
				return
			}
			var local [16]byte
			if a := uint64(uintptr(unsafe.Pointer(&local))); gWord(g, 0) <= a && a < gWord(g, 8) {
				bounded++
			}
			for i := range marks {
				if gWord(g, i*8) == id {
					marks[i]++
				}
			}
		}()
		wg.Wait()
	}
	stackKnown = bounded == samples
	for i, n := range marks {
		if n == samples {
			goidOffset = i * 8
			return
		}
	}
}

// gWord reads the word at offset off of the goroutine's g, which the
// calibration scans past the fields it knows. Built with -race (which
// checks unsafe pointer arithmetic, -d=checkptr), reading the g's words
// as plain memory is a fault; it is not one here.
//
//go:nocheckptr
func gWord(g unsafe.Pointer, off int) uint64 {
	return *(*uint64)(unsafe.Add(g, off))
}
