package ann

import "sync"

//avcheck:atomic
func Whole() {}

func Block() {
	//avcheck:atomic
	{
	}
	{ //avcheck:atomic
	}
}

//avcheck:atomic extra // want `malformed annotation: //avcheck:atomic takes no argument`
func Extra() {}

func Misplaced() {
	x := 1 //avcheck:atomic // want `malformed annotation: //avcheck:atomic must be in a function's doc comment or just before a block statement`
	_ = x
}

//avcheck:atomc // want `malformed annotation: unknown annotation //avcheck:atomc; known: atomic, guardedby, ignore`
func Typo() {}

//avcheck: atomic // want `malformed annotation: //avcheck: must be followed by an annotation name, with no space`
func Space() {}

// avcheck:atomic is prose, not an annotation.
func Prose() {}

type T struct {
	mu sync.Mutex
	a  int //avcheck:guardedby mu
	//avcheck:guardedby mu
	b int
	c int //avcheck:guardedby lock // want `malformed annotation: //avcheck:guardedby lock: the struct has no sync.Mutex or sync.RWMutex field lock`
	d int //avcheck:guardedby a // want `the struct has no sync.Mutex or sync.RWMutex field a`
	e int //avcheck:guardedby // want `malformed annotation: //avcheck:guardedby takes one argument, the name of a mutex`
	sync.RWMutex
	f int //avcheck:guardedby RWMutex
}

var (
	mu sync.Mutex
	g  int //avcheck:guardedby mu
	h  int //avcheck:guardedby nope // want `the package has no sync.Mutex or sync.RWMutex variable nope`
)

//avcheck:guardedby mu // want `//avcheck:guardedby must annotate a struct field or a package-level variable`
func Guarded() {}

//avcheck:ignore whole function
func Ignored() {}

func IgnoredLine() {
	_ = 1 //avcheck:ignore
}

// Racy reads a value racily, on purpose: the race detector and avcheck
// leave it alone.
//
//go:norace
func Racy() int {
	return 1
}
