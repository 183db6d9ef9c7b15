package record

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
	"golang.org/x/tools/go/ssa"
)

// TestStoredConst checks which stores the plan takes as writes of a
// constant, and the value each records: as a read of the same variable
// records its own.
func TestStoredConst(t *testing.T) {
	src := `package p

type state int

const closed state = 3

type T struct {
	ok bool
	n  int
	i8 int8
	u  uint32
	p  *T
	st state
	s  string
	sl []int
	e  error
	f  float64
}

func boolTrue(t *T)           { t.ok = true }
func boolFalse(t *T)          { t.ok = false }
func zero(t *T)               { t.n = 0 }
func negative(t *T)           { t.i8 = -1 }
func unsigned(t *T)           { t.u = 1<<32 - 1 }
func nilPointer(t *T)         { t.p = nil }
func named(t *T)              { t.st = closed }
func folded(t *T)             { t.n = 2 * 21 }
func local(t *T)              { v := true; t.ok = v }
func computed(t *T, v int)    { t.n = v }
func read(t *T)               { t.ok = !t.ok }
func either(t *T, c bool)     { v := 1; if c { v = 2 }; t.n = v }
func str(t *T)                { t.s = "x" }
func nilSlice(t *T)           { t.sl = nil }
func nilInterface(t *T)       { t.e = nil }
func float(t *T)              { t.f = 1.5 }
`
	_, pkg := buildSrc(t, src)
	want := map[string]string{
		"boolTrue": "1", "boolFalse": "0", "zero": "0", "negative": "18446744073709551615",
		"unsigned": "4294967295", "nilPointer": "0", "named": "3", "folded": "42", "local": "1",
		"computed": "none", "read": "none", "either": "none", "str": "none", "nilSlice": "none",
		"nilInterface": "none", "float": "none",
	}
	for name, w := range want {
		var got []string
		for _, b := range pkg.Func(name).Blocks {
			for _, instr := range b.Instrs {
				if s, ok := instr.(*ssa.Store); ok {
					if v, ok := storedConst(s); ok {
						got = append(got, fmt.Sprint(v))
					} else {
						got = append(got, "none")
					}
				}
			}
		}
		if strings.Join(got, " ") != w {
			t.Errorf("%s: stores %q, want %q", name, got, w)
		}
	}
}

// TestConstWrite records the pool whose Stop sets stopped to true before
// it closes the queue that Pause sends on, under the lock Pause holds
// (testdata/record/constwrite), with both recorders: each records Stop's
// write of stopped with its constant, and the precise stage refutes the
// R-W-R of the queue and the race, which need Stop's critical section
// before Pause's, where Pause reads true and sends nothing. Without the
// constant both stay (the R-W-R filtered): Stop's write could store
// anything.
func TestConstWrite(t *testing.T) {
	want := []string{
		"predicted R-W pool.go:39:rd pool.go:49:wr infeasible",
		"filtered R-W-R pool.go:39:rd pool.go:49:wr pool.go:39:rd infeasible",
	}
	for _, recorder := range []string{"delve", "instrument"} {
		t.Run(recorder, func(t *testing.T) {
			tr := recordTests(t, recorder, "constwrite")
			var writes []string
			for _, e := range tr.Events {
				if e.Kind == trace.KindWrite && strings.HasSuffix(tr.Object(e.Obj).Name, "stopped") {
					writes = append(writes, fmt.Sprintf("%s:%d v=%d flags=%d", filepath.Base(tr.Site(e.Site).File), tr.Site(e.Site).Line, e.Value, e.Flags))
				}
			}
			if w := []string{"pool.go:47 v=1 flags=65"}; !slices.Equal(writes, w) {
				t.Errorf("writes of stopped %q, want %q", writes, w)
			}
			var got []string
			for _, f := range predict.Predict(tr, predict.Options{All: true, Precise: true}).Findings {
				s := fmt.Sprintf("%s %s", f.Level, f.Pattern)
				for _, a := range f.Accesses {
					site := tr.Site(a.Site)
					s += fmt.Sprintf(" %s:%d:%s", filepath.Base(site.File), site.Line, a.Op)
				}
				if strings.HasPrefix(f.Dropped, "infeasible") {
					s += " infeasible"
				}
				got = append(got, s)
			}
			if !slices.Equal(got, want) {
				t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
