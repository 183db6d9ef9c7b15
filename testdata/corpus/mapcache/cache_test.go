package mapcache

import (
	"context"
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

type goroutineKey struct{}

// TestGet has two goroutines get one key, each computing it after handing
// the turn to the other (see package turn): both miss, and both compute
// and store it.
func TestGet(t *testing.T) {
	s := turn.New(2)
	c := New(func(ctx context.Context, key string) int {
		g := ctx.Value(goroutineKey{}).(int)
		s.Yield(g)
		return 10 + g
	})
	var got [2]int
	s.Run(func(g int) {
		ctx := context.WithValue(context.Background(), goroutineKey{}, g)
		v := c.Get(ctx, "k")
		if g == 0 {
			got[0] = v
		} else {
			got[1] = v
		}
	}, 0, 1, 0, 1)
	if got != [2]int{10, 11} {
		t.Errorf("got %v, want [10 11]: each goroutine computed the value", got)
	}
}
