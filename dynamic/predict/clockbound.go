package predict

import (
	"fmt"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// The happens-before engine keeps a clock per live goroutine, each with a
// component for every goroutine seen so far (a parent's clock, copied at
// each fork, holds them). A test that starts its goroutines faster than
// they end (100,000 of them in a loop, each doing one call) keeps tens of
// thousands alive, each clock as wide as all of them: tens of gigabytes,
// and a prediction that pages for an hour. ClockBound finds where a trace
// would pass a bound on that memory, so that the prediction covers the
// run up to there, and says so, rather than never end.

// DefaultClockWords is ClockBound's bound: 2^30 words, 4 GB of clocks.
const DefaultClockWords = 1 << 30

// ClockBound returns the number of events of t's prefix that the
// happens-before engine's goroutine clocks hold in at most maxWords words,
// by the bound live goroutines × goroutines seen, and why it stops there;
// len(t.Events) and "" if the whole trace does.
func ClockBound(t *trace.Trace, maxWords int64) (n int, why string) {
	seen := make(map[trace.GoID]bool)
	ended := make(map[trace.GoID]bool)
	var load clockLoad
	note := func(g trace.GoID) {
		if !seen[g] {
			seen[g] = true
			load.start()
		}
	}
	for i := range t.Events {
		e := &t.Events[i]
		note(e.G)
		switch e.Kind {
		case trace.KindFork:
			note(trace.GoID(e.Arg))
		case trace.KindEnd:
			if !ended[e.G] {
				ended[e.G] = true
				load.end()
			}
		}
		if load.over(maxWords) {
			return i, fmt.Sprintf("%d goroutines alive at once, each with a clock as wide as the %d goroutines seen, would take more than %d MB", load.live, load.seen, maxWords*4>>20)
		}
	}
	return len(t.Events), ""
}

// clockLoad counts what ClockBound bounds, the words of the goroutines'
// clocks: goroutines alive times goroutines seen. The read-time index
// (Prepass) counts them the same way, so that it gives up where the
// bound cuts.
type clockLoad struct{ seen, live int64 }

// start counts a goroutine seen for the first time; end, one's end.
func (c *clockLoad) start() { c.seen++; c.live++ }
func (c *clockLoad) end()   { c.live-- }

// over reports whether the clocks pass maxWords words.
func (c *clockLoad) over(maxWords int64) bool { return c.live*c.seen > maxWords }
