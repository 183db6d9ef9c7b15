package trace_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// A hand-written text trace may name objects and sites instead of
// declaring them; Validate names the first impossible event.
func ExampleValidate() {
	src := `avtrace 1
g1 fork g2
g1 acq mu @counter.go:12
g1 rd c.n @counter.go:13 v=0
g2 acq mu
`
	t, err := trace.ReadAll(trace.NewTextReader(strings.NewReader(src), "counter.txt"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(t.Events), "events;", t.Object(t.Events[2].Obj).Name, "at", t.Site(t.Events[2].Site))
	fmt.Println(trace.Validate(t))
	// Output:
	// 4 events; c.n at counter.go:13:0
	// event 3 (g2 acq mu): acquire of mu, which g1 holds
}

// Converting between formats streams the events.
func ExampleCopy() {
	src := "avtrace 1\nobj 0x10 var c.n\nobj 0x20 mutex c.mu\ng1 acq 0x20\ng1 wr 0x10\ng1 rel 0x20\n"
	n, err := trace.Copy(trace.NewSTDWriter(os.Stdout, nil), trace.NewTextReader(strings.NewReader(src), "in.txt"))
	fmt.Println(n, err)
	// Output:
	// T1|acq(L32)|0
	// T1|w(V16)|0
	// T1|rel(L32)|0
	// 3 <nil>
}
