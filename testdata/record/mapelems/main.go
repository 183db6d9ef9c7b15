// Command mapelems accesses the elements of maps, one access a line, so
// that the recorder's test can check each event: every element of a map
// with integer, boolean or string keys is a variable of its own, named by
// the map and the key's value.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

type store struct {
	m     map[string]int
	other map[string]int
	ids   map[int]int
	flags map[bool]string
	pairs map[[2]int]int
}

func newStore() *store {
	return &store{
		m:     make(map[string]int),
		other: make(map[string]int),
		ids:   make(map[int]int),
		flags: make(map[bool]string),
		pairs: make(map[[2]int]int),
	}
}

// run accesses the elements; long is a key longer than the recorder loads.
func (s *store) run(long string) int {
	_, ok := s.m["a"]
	s.m["a"] = 1
	v := s.m["a"]
	s.m["a"] += v
	s.m["b"]++
	s.other["a"] = 2
	delete(s.m, "b")
	n := -3
	s.ids[n] = v
	s.ids[n+1]--
	s.flags[ok] = "x"
	s.m[long] = 4
	p := [2]int{1, 2}
	s.pairs[p] = 5
	v = s.pairs[p]
	t := v
	for _, x := range s.m {
		t += x
	}
	clear(s.other)
	return t + len(s.m)
}

// grow adds enough keys to s.m for the map to grow, which moves its
// elements, and reads "a" again through another variable.
func (s *store) grow() int {
	m := s.m
	for i := range 100 {
		k := strconv.Itoa(i)
		m[k] = i
	}
	return lookup(m, "a")
}

func lookup(m map[string]int, k string) int {
	return m[k]
}

func main() {
	s := newStore()
	done := make(chan int)
	go func() {
		done <- s.run(strings.Repeat("k", 100)) + s.grow()
	}()
	if got := <-done; got != 15 {
		fmt.Fprintf(os.Stderr, "mapelems: got %d, want 15\n", got)
		os.Exit(1)
	}
}
