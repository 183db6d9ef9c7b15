package regions_test

import (
	"fmt"
	"go/token"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/analyzers/regions"
	"golang.org/x/tools/go/analysis/analysistest"
)

// dump renders a Result as one line per access and region, with lines
// instead of positions, so tests can compare it exactly.
func dump(fset *token.FileSet, res *regions.Result) string {
	var b strings.Builder
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, f := range res.Funcs {
		fmt.Fprintf(&b, "func %s\n", f.Fn.Name())
		for _, a := range f.Accesses {
			fmt.Fprintf(&b, "  %d %s %s", line(a.Pos), a.Kind, a.Path)
			if a.Atomic != "" {
				fmt.Fprintf(&b, " atomic.%s", a.Atomic)
			}
			if a.Via != "" {
				fmt.Fprintf(&b, " via %s", a.Expr)
			}
			for _, h := range a.Held {
				fmt.Fprintf(&b, " [%s#%d]", h.Lock, h.CS)
			}
			b.WriteByte('\n')
		}
		for _, r := range f.Regions {
			fmt.Fprintf(&b, "  region %s %d-%d (%s", r.Kind, line(r.Pos), line(r.End), r.Intent.Evidence)
			if in := r.Intent; in.From != nil {
				fmt.Fprintf(&b, " %d-%d", line(in.From.Pos), line(in.To.Pos))
			}
			b.WriteString("):")
			for _, a := range r.Accesses {
				fmt.Fprintf(&b, " %s@%d", a.Path, line(a.Pos))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestFacts checks the Summary facts of every function (the "want fn:"
// comments) and that the analyzer reports nothing.
func TestFacts(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), regions.Analyzer, "reg")
}

func TestResult(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), regions.Analyzer, "reg")
	got := dump(results[0].Pass.Fset, results[0].Result.(*regions.Result))
	if got != wantReg {
		t.Errorf("result:\n%s\nwant:\n%s", got, wantReg)
	}
}

const wantReg = `func Inc
  15 read c.n [c.mu#1]
  15 write c.n [c.mu#1]
  region lock 13-16 (critical-section): c.n@15 c.n@15
func Get
  22 read c.n [c.mu#1]
  region lock 20-23 (critical-section): c.n@22
func Set
  28 write c.n [c.mu#1]
  region lock 27-29 (critical-section): c.n@28
func Double
  34 read c.n via c.Get() [c.mu#1]
  35 write c.n via c.Set(v * 2) [c.mu#2]
  region proximity 34-35 (write-back 34-35): c.n@34 c.n@35
func lock
  region lock 39-39 (critical-section):
func unlock
func Helpers
  45 read c.n [c.mu#1]
  45 write c.n [c.mu#1]
  region lock 44-46 (critical-section): c.n@45 c.n@45
func Nested
  58 read p.a [p.outer#1] [p.inner#2]
  60 write p.b [p.outer#1]
  region lock 56-61 (critical-section): p.a@58 p.b@60
  region proximity 58-60 (write-back 58-60): p.a@58 p.b@60
func Try
  67 write c.n [c.mu#1]
  region lock 66-68 (critical-section): c.n@67
func Split
  78 read total
  78 write total
  79 read count
  79 write count
  80 read c.ch
  81 read total
  81 write total
  region proximity 78-79 (none): total@78 total@78 count@79 count@79
func Annotated
  86 read total
  86 write c.n
  region annotated 85-87 (annotation): c.n@86 total@86
  region proximity 86-86 (write-back 86-86): c.n@86 total@86
func Block
  90 write total
  93 write c.n
  94 write count
  region proximity 90-95 (none): total@90 c.n@93 count@94
  region annotated 92-95 (annotation): c.n@93 count@94
func Closure
func Closure$1
  101 read c
  101 write c.n
func initRLocked
  116 write c.keys [c.mu#1]
  region lock 114-117 (critical-section): c.keys@116
func IncThenGet
  124 read c.n via c.Inc() [c.mu#1]
  124 write c.n via c.Inc() [c.mu#1]
  125 read c.n via c.Get() [c.mu#2]
  region proximity 124-125 (none): c.n@124 c.n@124 c.n@125
func CheckThenSet
  131 read c.n via c.Get() [c.mu#1]
  132 write c.n via c.Set(1) [c.mu#2]
  region proximity 131-132 (branch 131-132): c.n@131 c.n@132
func Span
  140 read p.a [p.outer#1]
  143 read p.b [p.outer#2]
  region lock 139-141 (critical-section): p.a@140
  region proximity 140-143 (read-pair 140-143): p.a@140 p.b@143
  region lock 142-144 (critical-section): p.b@143
func Logged
  150 read p.a
  151 read p.b
  region proximity 150-151 (none): p.a@150 p.b@151
func Relock
  162 read c.n [c.mu#1]
  163 read c.n [c.mu#1]
  168 read c.n [c.mu#2]
  region lock 160-165 (critical-section): c.n@162 c.n@163
  region lock 167-169 (critical-section): c.n@168
func Assert
  176 read c.n via c.Get() [c.mu#1]
  177 write c.n via c.Set(0) [c.mu#2]
  region proximity 176-177 (none): c.n@176 c.n@177
func Push
  198 read s.top [s.mu#1]
  202 write s.top [s.mu#2]
  region lock 197-199 (critical-section): s.top@198
  region proximity 198-202 (write-back 198-202): s.top@198 s.top@202
  region lock 201-203 (critical-section): s.top@202
func Replace
  210 read s.top [s.mu#1]
  215 write s.top [s.mu#2]
  region lock 209-211 (critical-section): s.top@210
  region proximity 209-216 (none): s.top@210 s.top@215
  region lock 214-216 (critical-section): s.top@215
func elapsed
  226 read g.start
func Tick
  233 read g.start via g.elapsed() [g.mu#1]
  233 write g.age [g.mu#1]
  region lock 232-234 (critical-section): g.age@233 g.start@233
func SetA
  241 write p.a [p.outer#1]
  region lock 240-242 (critical-section): p.a@241
func NewLoader
func setup
  259 write l.load
func Get
  265 read l.load
  269 read l.n [l.mu#1]
  272 write l.n [l.mu#2]
  region proximity 265-273 (none): l.load@265 l.n@269 l.n@272
  region lock 268-270 (critical-section): l.n@269
  region lock 271-273 (critical-section): l.n@272
func SetLoad
  286 write s.load [s.mu#1]
  region lock 285-287 (critical-section): s.load@286
func Get
  294 read s.load [s.mu#1]
  300 write s.n [s.mu#2]
  region lock 293-295 (critical-section): s.load@294
  region proximity 294-300 (branch 294-300): s.load@294 s.n@300
  region lock 299-301 (critical-section): s.n@300
func Tally
  309 read c.n via c.Get() [c.mu#1]
  309 read total
  309 write total
  310 write c.n via c.Set(1) [c.mu#2]
  311 read total
  311 write total
  region proximity 309-311 (none): total@309 total@309 c.n@309 c.n@310 total@311 total@311
  region proximity 309-309 (read-pair 309-309): total@309 total@309 c.n@309
func NewMemo
func Get
  325 read c.m [c.mu#1]
  325 read c.m[] [c.mu#1]
  331 read c.m [c.mu#2]
  331 write c.m[] [c.mu#2]
  region lock 324-326 (critical-section): c.m@325 c.m[]@325
  region proximity 325-331 (branch 325-331): c.m@325 c.m[]@325 c.m@331 c.m[]@331
  region lock 330-332 (critical-section): c.m@331 c.m[]@331
func SetMaxCap
  343 write maxCap
func CapFixed
  349 read defaultCap
  353 read c.n [c.mu#1]
  356 write c.n [c.mu#2]
  region proximity 349-357 (none): defaultCap@349 c.n@353 c.n@356
  region lock 352-354 (critical-section): c.n@353
  region lock 355-357 (critical-section): c.n@356
func CapMax
  364 read maxCap
  368 read c.n [c.mu#1]
  371 write c.n [c.mu#2]
  region proximity 364-371 (branch 364-368): maxCap@364 c.n@368 c.n@371
  region lock 367-369 (critical-section): c.n@368
  region lock 370-372 (critical-section): c.n@371
`

// TestViaSync checks that what a call of the runtime or of a sync type
// reads or writes gives no evidence (runtime.GOMAXPROCS's value given to
// wg.Add: write-back 31-33 without the rule, and the loop's Acquire
// calls a region), while a sync.Map's Load deciding its Store does. Only the
// regions' kinds, lines and evidence are compared: the accesses inside
// the runtime and sync.Map change with the Go release.
func TestViaSync(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), regions.Analyzer, "regsync")
	var regs []string
	fn := ""
	for _, l := range strings.Split(dump(results[0].Pass.Fset, results[0].Result.(*regions.Result)), "\n") {
		l = strings.TrimSpace(l)
		if name, ok := strings.CutPrefix(l, "func "); ok {
			fn = name
		}
		if r, ok := strings.CutPrefix(l, "region "); ok {
			r, _, _ = strings.Cut(r, ":")
			regs = append(regs, fn+": "+r)
		}
	}
	want := "Acquire: lock 15-17 (critical-section)\nRelease: lock 21-23 (critical-section)\nSpread: proximity 31-35 (none)\nGrow: proximity 47-49 (branch 47-49)"
	if got := strings.Join(regs, "\n"); got != want {
		t.Errorf("regions:\n%s\nwant:\n%s", got, want)
	}
}
