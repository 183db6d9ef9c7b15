package replay

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"go/constant"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/children"
	"github.com/go-delve/delve/pkg/goversion"
	"github.com/go-delve/delve/pkg/proc"
	"github.com/go-delve/delve/service/api"
)

// ProgramEnv is the environment variable that avcheck run and avcheck
// test set (to "1") in the environment of every program they replay, so
// that a test that orders its own goroutines to make its recorded run
// take one interleaving (through pipes, sleeps or a scheduler of its
// own, which no trace records) can leave the order to the replay, which
// forces the witness's. The program runs in the environment of the
// process that calls Replay.
const ProgramEnv = "AVCHECK_REPLAY"

// Options says what to run under the replay.
type Options struct {
	Binary string   // the program or test binary the witness was recorded from
	Args   []string // its arguments
	Dir    string   // its working directory
	// Output receives the program's standard output and error, which
	// Result.Output holds too; nil keeps them in Result.Output only.
	Output io.Writer
	// Timeout, if positive, bounds the whole run: past it, the program is
	// killed and the witness, if not yet enforced, is not.
	Timeout time.Duration
}

// Result is what a replay observed.
type Result struct {
	// Enforced says every step of the witness ran in its order.
	Enforced bool
	// Reason, when not Enforced, says why in one line.
	Reason string
	// TimedOut says the replay's time ran out before the witness's last
	// step (Reason says so too).
	TimedOut bool
	// Steps counts the steps that ran in the witness's order.
	Steps int
	// Values are the values the witness's accesses of integers and
	// booleans read and wrote, in step order.
	Values []Value
	// Meeting, for a race's witness (Witness.Pair), is what the replay
	// saw when the goroutines of its two accesses stood at them at once;
	// nil if they did not. Steps then counts the steps forced before.
	Meeting *Meeting
	// Complete says the program ran to its end by itself, with Status.
	Complete bool
	Status   int
	// Output is the program's standard output and error.
	Output string
	// PID is the process the replay ran, killed by the time Replay
	// returns.
	PID int
}

// Meeting is what a race's replay saw when the goroutines of its two
// accesses stood at them at once, both evaluating their access's
// expression to one variable.
type Meeting struct {
	Addr  uint64 // where the variable is
	Value string // its value then; "" if the replay does not read its type
}

// Failed says whether the program ended with a status other than 0,
// such as a test that failed.
func (r *Result) Failed() bool { return r.Complete && r.Status != 0 }

// Value is the value an access of the witness saw: for a read, the
// variable's value when its goroutine went past the step's line; for a
// write, the value the variable held once it had.
type Value struct {
	Step  int // index in Witness.Steps
	Expr  string
	Write bool
	Value string
}

func (v Value) String() string {
	op := "read"
	if v.Write {
		op = "wrote"
	}
	return fmt.Sprintf("step %d %s %s = %s", v.Step, op, v.Expr, v.Value)
}

// maxDepth bounds the stacks unwound to tell where a goroutine is.
const maxDepth = 64

// pollEvery is how often the replay stops the program to see where the
// goroutines are when no breakpoint stops it, and stuckPolls how many
// such looks in a row must find every goroutine held or blocked before
// the schedule is declared stuck.
const (
	pollEvery  = 20 * time.Millisecond
	stuckPolls = 10
)

// Replay runs the binary under Delve and forces the witness's order on
// it: each goroutine the witness names is held at the line of its next
// step until the step before it has run, while every other goroutine,
// and every event of a named one outside the witness, runs freely. Once
// the last step has run the program runs to its end. It always kills
// the program before returning. An error means the replay could not run
// at all; a witness that could not be followed is a Result with a Reason.
func Replay(ctx context.Context, w *Witness, opts Options) (res Result, err error) {
	if len(w.Steps) == 0 {
		return Result{}, errors.New("the witness has no step")
	}
	if reason := unenforceable(newReplayer(nil, w)); reason != "" {
		return Result{Reason: reason}, nil
	}
	var output bytes.Buffer
	var outMu sync.Mutex
	out := io.Writer(&lockedWriter{w: &output, mu: &outMu})
	if opts.Output != nil {
		out = io.MultiWriter(out, opts.Output)
	}
	grp, end, err := children.Launch(opts.Binary, opts.Args, opts.Dir, out)
	if err != nil {
		return Result{}, err
	}
	rp := newReplayer(grp, w)
	pid := grp.Selected.Pid()
	// The program's output and id are set on the way out, once it is
	// gone, whichever return ends the replay.
	defer func() {
		end()
		outMu.Lock()
		res.Output = output.String()
		outMu.Unlock()
		res.PID = pid
	}()
	if err := rp.setBreakpoints(); err != nil {
		return res, err
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	// The program is stopped from time to time, so that a goroutine
	// blocked outside the witness's lines, or gone, is seen.
	stopDone := make(chan struct{})
	defer close(stopDone)
	go func() {
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				_ = grp.RequestManualStop()
				return
			case <-tick.C:
				_ = grp.RequestManualStop()
			case <-stopDone:
				return
			}
		}
	}()
	res = rp.run(ctx)
	return res, nil
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type line struct {
	file string
	line int
}

// turn is a run of consecutive steps of one goroutine at one arrival at
// one line: the goroutine goes past the line at once.
type turn struct {
	g     int
	at    line
	visit int
	steps []int
}

// rgoroutine is what the replay knows of a goroutine of the run.
type rgoroutine struct {
	w        int // the witness goroutine it is, or -1
	visits   map[line]int
	lastAddr uint64 // the breakpoint it was last stopped at
	// lastCount is the debugger's count of its hits of lastAddr then, to
	// tell a new hit from the same one seen twice.
	lastCount uint64
	lastLine  line
	held      uint64 // the breakpoint it is held at, 0 if none
	// grantVisit is its arrival at the line of the turn it was last let
	// go at.
	grantVisit int
	// pass is the breakpoint it was last let go at, until it stops
	// elsewhere.
	pass uint64
}

// cell is the memory of an integer or boolean a step accessed.
type cell struct {
	addr uint64
	size int64
	kind reflect.Kind
}

type replayer struct {
	grp   *proc.TargetGroup
	tgt   *proc.Target
	w     *Witness
	turns []turn
	// next[g] is the index in turns of witness goroutine g's next turn.
	next  []int
	queue [][]int // per witness goroutine, its turns in order
	cur   int     // the turn that runs next
	// granted says turns[cur]'s goroutine has been let go past its line
	// and has not yet left it.
	granted bool
	bps     map[uint64]line
	// exits are the addresses of the breakpoint where every goroutine
	// ends (runtime.goexit1), so that goroutines of a go statement that
	// start and end between two stops of the program are still counted.
	exits   map[uint64]bool
	gs      map[int64]*rgoroutine
	byW     []int64 // witness goroutine -> runtime id, 0 if not matched yet
	counted map[Goroutine]int
	objs    map[trace.ObjID]uint64 // the witness's objects -> their addresses
	addrs   map[uint64]trace.ObjID
	writes  []pendingWrite
	values  []Value
	stuck   int
	looked  time.Time // the last look for a stuck schedule
	reason  string
	// timedOut says the replay's time ran out before the last step.
	timedOut bool
	// meet, for a race's witness, is where its two accesses' goroutines
	// are to meet once the turns before them have run (see meeting), and
	// met what the replay saw when they did.
	meet []meetAt
	met  *Meeting
}

// meetAt is where a goroutine of a race's witness is held to meet the
// other: at its access's line, on the arrival that makes the access.
type meetAt struct {
	g     int
	at    line
	visit int
	step  int
}

// meeting returns where the goroutines of a race's two accesses are to
// meet, and the number of the witness's steps that are forced in order
// before: those before the first step either goroutine makes on the
// arrival at its access's line. A race's two accesses are not ordered,
// so the replay need not run them in the witness's order: it holds
// each goroutine at the line of its access and shows the race when
// both stand there at once, either free to go first (what PECAN's
// schedules do for a race: they place its two accesses next to each
// other; shared/seeds/003_50220ead9b146295.txt, section 6). So a race
// inside one line, whose goroutine's steps at one arrival the witness
// splits, is shown too. ok is false for another finding, and where an
// operation the replay holds goroutines for (a lock, a receive) comes
// before the access on its line: a goroutine standing at the line could
// wait there for the other one.
func meeting(w *Witness) (targets []meetAt, cut int, ok bool) {
	if len(w.Pair) != 2 {
		return nil, 0, false
	}
	cut = len(w.Steps)
	for _, p := range w.Pair {
		s := w.Steps[p]
		m := meetAt{g: s.G, at: line{s.File, s.Line}, visit: max(s.Visit, 1), step: p}
		for i := 0; i <= p; i++ {
			o := w.Steps[i]
			if o.G != s.G || o.File != s.File || o.Line != s.Line || max(o.Visit, 1) != m.visit || !enforced(o.Kind) {
				continue
			}
			cut = min(cut, i)
			if i < p && !o.Kind.IsAccess() {
				return nil, 0, false
			}
		}
		targets = append(targets, m)
	}
	return targets, cut, true
}

// pendingWrite is a write step whose value is read once its goroutine
// has gone past the line.
type pendingWrite struct {
	step int
	expr string
	c    cell
}

func newReplayer(grp *proc.TargetGroup, w *Witness) *replayer {
	rp := &replayer{
		grp: grp, w: w,
		next:    make([]int, len(w.Goroutines)),
		queue:   make([][]int, len(w.Goroutines)),
		bps:     make(map[uint64]line),
		exits:   make(map[uint64]bool),
		gs:      make(map[int64]*rgoroutine),
		byW:     make([]int64, len(w.Goroutines)),
		counted: make(map[Goroutine]int),
		objs:    make(map[trace.ObjID]uint64),
		addrs:   make(map[uint64]trace.ObjID),
	}
	steps := w.Steps
	if meet, cut, ok := meeting(w); ok {
		rp.meet, steps = meet, w.Steps[:cut]
	}
	for i, s := range steps {
		if !enforced(s.Kind) {
			continue
		}
		v := max(s.Visit, 1)
		at := line{s.File, s.Line}
		if n := len(rp.turns); n > 0 {
			t := &rp.turns[n-1]
			if t.g == s.G && t.at == at && t.visit == v {
				t.steps = append(t.steps, i)
				continue
			}
		}
		rp.turns = append(rp.turns, turn{g: s.G, at: at, visit: v, steps: []int{i}})
	}
	for i, t := range rp.turns {
		rp.queue[t.g] = append(rp.queue[t.g], i)
	}
	if grp != nil {
		rp.tgt = grp.Selected
	}
	return rp
}

// unenforceable says why the replay cannot force rp's witness, or "":
// a goroutine goes past a line at once, so two of its steps at one
// arrival at a line with another goroutine's step between them cannot
// be forced apart.
func unenforceable(rp *replayer) string {
	for g, q := range rp.queue {
		for i := 1; i < len(q); i++ {
			a, b := rp.turns[q[i-1]], rp.turns[q[i]]
			if a.at == b.at && a.visit == b.visit {
				s, o := rp.w.Steps[b.steps[0]], rp.w.Steps[rp.turns[q[i-1]+1].steps[0]]
				return fmt.Sprintf("steps %d and %d of %s are at one arrival at %s:%d, and step %d (%s, %s) comes between them: a replay holds goroutines at lines, not within one",
					a.steps[len(a.steps)-1], b.steps[0], rp.w.Goroutines[g], shortFile(s.File), s.Line, rp.turns[q[i-1]+1].steps[0], o, rp.w.Goroutines[o.G])
			}
		}
	}
	return ""
}

// setBreakpoints stops every goroutine at the lines of the witness's
// steps.
func (rp *replayer) setBreakpoints() error {
	lines := make([]line, 0, len(rp.turns)+len(rp.meet))
	for _, t := range rp.turns {
		lines = append(lines, t.at)
	}
	for _, m := range rp.meet {
		lines = append(lines, m.at)
	}
	for _, at := range lines {
		addrs, err := proc.FindFileLocation(rp.tgt, at.file, at.line)
		if err != nil {
			return fmt.Errorf("no code at %s:%d, a line of the witness: %w", at.file, at.line, err)
		}
		for _, a := range addrs {
			if _, ok := rp.bps[a]; ok {
				continue
			}
			if _, err := rp.tgt.SetBreakpoint(len(rp.bps)+1, a, proc.UserBreakpoint, nil); err != nil {
				return fmt.Errorf("setting a breakpoint at %s:%d: %w", at.file, at.line, err)
			}
			rp.bps[a] = at
		}
	}
	// Tests are matched by their rank among the tests run, so every
	// test's goroutine must be seen, even one that ends before the
	// program next stops: each stops once where it starts.
	if slices.ContainsFunc(rp.w.Goroutines, func(g Goroutine) bool { return g.Test }) {
		err := rp.breakAtFunc("testing.tRunner", func(a uint64) {
			file, n, _ := rp.tgt.BinInfo().PCToLine(a)
			rp.bps[a] = line{file, n}
		})
		if err != nil {
			return err
		}
	}
	// Goroutines of a go statement are matched by their rank among that
	// statement's goroutines, so each must be seen, even one that starts
	// and ends between two stops of the program: each stops once where
	// it ends, still there.
	if slices.ContainsFunc(rp.w.Goroutines, func(g Goroutine) bool { return !g.Test && g.File != "" }) {
		if err := rp.breakAtFunc("runtime.goexit1", func(a uint64) { rp.exits[a] = true }); err != nil {
			return err
		}
	}
	return nil
}

// breakAtFunc sets a breakpoint at the entry of function fn, unless one
// is there, and hands add each address. A program without fn (not a
// test binary, for testing.tRunner) gets none: its goroutines are then
// seen at the program's stops only.
func (rp *replayer) breakAtFunc(fn string, add func(addr uint64)) error {
	addrs, err := proc.FindFunctionLocation(rp.tgt, fn, 0)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if _, ok := rp.bps[a]; ok || rp.exits[a] {
			continue
		}
		if _, err := rp.tgt.SetBreakpoint(len(rp.bps)+len(rp.exits)+1, a, proc.UserBreakpoint, nil); err != nil {
			return fmt.Errorf("setting a breakpoint at %s: %w", fn, err)
		}
		add(a)
	}
	return nil
}

// run drives the program until the witness has run and the program has
// ended, or the witness cannot be followed.
func (rp *replayer) run(ctx context.Context) Result {
	var res Result
	for {
		err := rp.grp.Continue()
		var exited proc.ErrProcessExited
		if errors.As(err, &exited) {
			res.Complete, res.Status = true, exited.Status
			if rp.granted {
				// The current step's goroutine was let go past its line
				// and the program ended before a stop saw it leave.
				rp.finishWrites()
				rp.granted = false
				rp.cur++
			}
			if !rp.finished() && rp.reason == "" {
				rp.reason = fmt.Sprintf("the program exited with status %d before %s", exited.Status, rp.waitingFor())
			}
			break
		}
		if err != nil {
			rp.reason = "the replay stopped: " + oneLine(err)
			break
		}
		if ctx.Err() != nil {
			if !rp.finished() {
				rp.reason = "the replay ran past its time limit before " + rp.waitingFor()
				rp.timedOut = true
				if where := rp.whereIs(rp.nextG()); where != "" {
					rp.reason += "; " + where
				}
			}
			break
		}
		if rp.finished() {
			continue // running freely to the end
		}
		rp.stop()
		if rp.reason != "" {
			break
		}
		if rp.finished() {
			rp.finishWrites()
			rp.releaseAll()
			continue
		}
		rp.holdThreads()
	}
	res.Steps = 0
	for i := 0; i < rp.cur && i < len(rp.turns); i++ {
		res.Steps += len(rp.turns[i].steps)
	}
	res.Enforced = rp.finished() && rp.reason == ""
	res.Reason = rp.reason
	res.TimedOut = rp.timedOut
	res.Meeting = rp.met
	if res.Enforced && rp.met == nil {
		res.Steps = len(rp.w.Steps)
	}
	sort.SliceStable(rp.values, func(i, j int) bool { return rp.values[i].Step < rp.values[j].Step })
	res.Values = rp.values
	return res
}

// stop handles one stop of the program: the goroutines at breakpoints
// are matched, held or let go, the current turn checked for its end, and
// the next one granted when its goroutine waits for it.
func (rp *replayer) stop() {
	threads := rp.tgt.ThreadList()
	sort.Slice(threads, func(i, j int) bool { return threads[i].ThreadID() < threads[j].ThreadID() })
	for _, th := range threads {
		if bs := th.Breakpoint(); bs != nil && bs.Breakpoint != nil && rp.exits[bs.Addr] {
			// A goroutine ends: count it before it is gone.
			if all, _, err := proc.GoroutinesInfo(rp.tgt, 0, 0); err == nil {
				rp.match(all)
			}
			break
		}
	}
	hit := make(map[int64]bool)
	for _, th := range threads {
		addr, ok := rp.at(th)
		if !ok {
			continue
		}
		g, err := proc.GetG(th)
		if err != nil || g == nil || g.SystemStack {
			continue
		}
		bs := th.Breakpoint()
		trapped := bs != nil && bs.Breakpoint != nil && bs.Addr == addr
		count := uint64(0)
		if trapped && bs.Logical != nil {
			count = bs.Logical.HitCount[g.ID]
		}
		if gs := rp.gs[g.ID]; gs != nil && gs.held == addr {
			if trapped {
				// Each trap of a held goroutine counts as a hit:
				// the last is the one a repeated stop shows again.
				gs.lastCount = count
			}
			rp.tryGrant(th, g, gs)
			continue
		}
		if !trapped {
			continue // standing at the breakpoint, not stopped by it
		}
		if gs := rp.gs[g.ID]; gs != nil {
			if gs.lastAddr == addr && gs.lastCount == count {
				// A continue that returned before the program ran
				// (a stop asked for in between) shows the same hit
				// again.
				continue
			}
			if gs.pass != 0 {
				pass := gs.pass
				gs.pass = 0
				if pass == addr {
					gs.lastCount = count
					continue
				}
			}
		}
		hit[g.ID] = true
		rp.arrive(th, g, addr, rp.bps[addr])
		rp.gs[g.ID].lastCount = count
		if rp.reason != "" {
			return
		}
	}
	if rp.granted {
		rp.checkTurnEnd(hit)
	}
	switch {
	case rp.cur < len(rp.turns):
		rp.checkStuck()
	case rp.waitMeet():
		rp.tryMeet(threads)
		if rp.met == nil && rp.reason == "" {
			rp.checkStuck()
		}
	}
}

// finished says whether the witness has been forced: its turns have run
// and, for a race's, its two goroutines have met.
func (rp *replayer) finished() bool {
	return rp.cur >= len(rp.turns) && !rp.waitMeet()
}

// waitMeet says whether the replay waits for a race's two goroutines to
// meet.
func (rp *replayer) waitMeet() bool {
	return len(rp.meet) > 0 && rp.met == nil
}

// nextG is the witness goroutine the replay waits for: that of the next
// turn, or one of a race's two not yet standing at its access.
func (rp *replayer) nextG() int {
	if rp.cur < len(rp.turns) {
		return rp.turns[rp.cur].g
	}
	for _, m := range rp.meet {
		if gs := rp.gs[rp.byW[m.g]]; gs == nil || gs.held == 0 {
			return m.g
		}
	}
	return rp.meet[0].g
}

// tryMeet looks whether both goroutines of a race's witness stand at
// their accesses' lines, held there, and if so evaluates each access's
// expression in its goroutine's frame: the race shows when both reach
// one variable.
func (rp *replayer) tryMeet(threads []proc.Thread) {
	var addrs [2]uint64
	var c cell
	readable := false
	for k, m := range rp.meet {
		id := rp.byW[m.g]
		gs := rp.gs[id]
		if id == 0 || gs == nil || gs.held == 0 || rp.bps[gs.held] != m.at {
			return
		}
		var th proc.Thread
		var g *proc.G
		for _, t := range threads {
			if tg, err := proc.GetG(t); err == nil && tg != nil && tg.ID == id {
				th, g = t, tg
				break
			}
		}
		if th == nil {
			return
		}
		s := rp.w.Steps[m.step]
		var v *proc.Variable
		ok := false
		if frames, err := proc.ThreadStacktrace(rp.tgt, th, maxDepth); err == nil && len(frames) > 0 {
			v, ok = variable(proc.FrameToScope(rp.tgt, th.ProcessMemory(), g, th.ThreadID(), frames...), s.Expr)
		}
		if !ok {
			rp.reason = fmt.Sprintf("the goroutines of the race's two accesses stood at them at once, but step %d (%s, %s) could not be evaluated there to tell which variable it reaches", m.step, s, rp.w.Goroutines[m.g])
			return
		}
		if why := rp.sameObject(m.step, v.Addr); why != "" {
			rp.reason = why
			return
		}
		addrs[k] = v.Addr
		if k == 0 {
			c, readable = cellOf(v)
		}
	}
	if addrs[0] != addrs[1] {
		a, b := rp.w.Steps[rp.meet[0].step], rp.w.Steps[rp.meet[1].step]
		rp.reason = fmt.Sprintf("the goroutines of the race's two accesses stood at them at once, but reached two variables: %s (%s) at %#x, %s (%s) at %#x", a, rp.w.Goroutines[a.G], addrs[0], b, rp.w.Goroutines[b.G], addrs[1])
		return
	}
	m := &Meeting{Addr: addrs[0]}
	if readable {
		m.Value, _ = rp.read(c)
	}
	rp.met = m
}

// variable evaluates an access step's expression in a goroutine's
// frame, and says whether it reached a variable of the program (not
// one the debugger made up, such as a map's element it copied).
func variable(scope *proc.EvalScope, expr string) (*proc.Variable, bool) {
	if expr == "" {
		return nil, false
	}
	v, err := scope.EvalExpression(expr, proc.LoadConfig{MaxStructFields: 0})
	if err != nil || v.Addr == 0 || v.Addr >= proc.FakeAddressBase {
		return nil, false
	}
	return v, true
}

// sameObject checks that step i, which reached the variable at addr,
// reached the one the witness's earlier steps on its object did, and
// no other object's, and remembers it; it says why not, or "".
func (rp *replayer) sameObject(i int, addr uint64) string {
	s := rp.w.Steps[i]
	if s.Obj == 0 {
		return ""
	}
	if a, ok := rp.objs[s.Obj]; ok && a != addr {
		return fmt.Sprintf("step %d (%s, %s) accessed another %s than the witness's earlier steps on it", i, s, rp.w.Goroutines[s.G], s.Expr)
	}
	if o, ok := rp.addrs[addr]; ok && o != s.Obj {
		return fmt.Sprintf("step %d (%s, %s) accessed the variable of another object of the witness", i, s, rp.w.Goroutines[s.G])
	}
	rp.objs[s.Obj], rp.addrs[addr] = addr, s.Obj
	return ""
}

// at returns the breakpoint th stands at: the one it stopped at, or, for
// a held goroutine's thread that the debugger stopped before its trap
// instruction ran again (or took its trap for a stale one), the one at
// its PC.
func (rp *replayer) at(th proc.Thread) (uint64, bool) {
	if bs := th.Breakpoint(); bs != nil && bs.Breakpoint != nil {
		if _, ok := rp.bps[bs.Addr]; ok {
			return bs.Addr, true
		}
	}
	regs, err := th.Registers()
	if err != nil {
		return 0, false
	}
	_, ok := rp.bps[regs.PC()]
	return regs.PC(), ok
}

// arrive handles goroutine g stopped at breakpoint addr of line at.
func (rp *replayer) arrive(th proc.Thread, g *proc.G, addr uint64, at line) {
	gs := rp.goroutine(g)
	if gs.lastAddr == addr || gs.lastLine != at {
		gs.visits[at]++
	}
	gs.lastAddr, gs.lastLine = addr, at
	if gs.w < 0 {
		return
	}
	q := rp.queue[gs.w]
	if rp.next[gs.w] >= len(q) {
		// Past its last turn: held where it is to meet the race's other
		// goroutine, else free.
		for _, m := range rp.meet {
			if m.g == gs.w && m.at == at && gs.visits[at] >= m.visit && rp.met == nil {
				gs.held = addr
			}
		}
		return
	}
	k := q[rp.next[gs.w]]
	t := rp.turns[k]
	if t.at != at || gs.visits[at] < t.visit {
		// Not its next step: free. An arrival counts from the one the
		// witness names on: a deferred call's line is arrived at twice
		// (its defer statement, then the call at the return), where
		// the recorded events name it once.
		return
	}
	if rp.granted && k == rp.cur {
		return
	}
	gs.held = addr
	rp.tryGrant(th, g, gs)
}

// tryGrant lets g, held at its next step, go if that step's turn has
// come, evaluating the accesses of the turn in its frame first.
func (rp *replayer) tryGrant(th proc.Thread, g *proc.G, gs *rgoroutine) {
	if rp.granted || rp.cur >= len(rp.turns) || rp.turns[rp.cur].g != gs.w {
		return
	}
	t := rp.turns[rp.cur]
	frames, err := proc.ThreadStacktrace(rp.tgt, th, maxDepth)
	if err == nil && len(frames) > 0 {
		scope := proc.FrameToScope(rp.tgt, th.ProcessMemory(), g, th.ThreadID(), frames...)
		for _, i := range t.steps {
			s := rp.w.Steps[i]
			v, ok := variable(scope, s.Expr)
			if !ok {
				continue // not evaluated: no value, no object check
			}
			if why := rp.sameObject(i, v.Addr); why != "" {
				rp.reason = why
				return
			}
			c, ok := cellOf(v)
			if !ok {
				continue
			}
			if s.Kind.IsWrite() {
				rp.writes = append(rp.writes, pendingWrite{step: i, expr: s.Expr, c: c})
			} else if val, ok := rp.read(c); ok {
				rp.values = append(rp.values, Value{Step: i, Expr: s.Expr, Value: val})
			}
		}
	}
	if rp.cur == len(rp.turns)-1 && len(rp.meet) == 0 && err == nil && len(frames) > 0 {
		rp.stopAfter(frames, t.at)
	}
	// A goroutine let go standing at the trap without having executed
	// it traps once more as it goes, and one whose hit was taken may be
	// shown that hit again: neither is a new arrival. A real one comes
	// after a stop elsewhere, unless the line loops on itself.
	gs.pass = gs.held
	if rp.stepOff(th, gs.held) {
		gs.pass = 0 // past its trap: it cannot take it again now
	}
	gs.grantVisit = gs.visits[t.at]
	gs.held = 0
	rp.granted = true
	rp.next[gs.w]++
}

// stepOff moves the thread th of a goroutine let go at the breakpoint at
// addr past the breakpoint's instruction, one instruction at a time, and
// says whether it did. Left to the next continue, the step over the
// breakpoint can be cut short by a signal (the runtime's preemption
// signal, frequent on a loaded machine), and the goroutine then takes
// the breakpoint's trap again without having run its line: the same
// trap as a loop's next arrival at the line, which would end the turn
// before its write and read the value the write had not made yet.
func (rp *replayer) stepOff(th proc.Thread, addr uint64) bool {
	if err := rp.tgt.SwitchThread(th.ThreadID()); err != nil {
		return false
	}
	for range maxStepTries {
		regs, err := th.Registers()
		if err != nil {
			return false
		}
		if regs.PC() != addr {
			return true
		}
		if err := rp.grp.StepInstruction(false); err != nil {
			return false
		}
	}
	return false
}

// maxStepTries bounds the single steps stepOff tries: each that a signal
// cut short leaves the thread where it was.
const maxStepTries = 8

// stopAfter sets breakpoints on the lines after line at of the function
// of frames[0], and at its return, so that the goroutine of the last
// turn stops once past the turn's line, where the values it wrote are
// read; without them it would run freely to the end.
func (rp *replayer) stopAfter(frames []proc.Stackframe, at line) {
	fn := frames[0].Call.Fn
	if fn == nil {
		return
	}
	set := func(a uint64, l line) {
		if _, ok := rp.bps[a]; ok {
			return
		}
		if _, err := rp.tgt.SetBreakpoint(len(rp.bps)+1, a, proc.UserBreakpoint, nil); err == nil {
			rp.bps[a] = l
		}
	}
	for n := at.line + 1; n <= at.line+maxAfter; n++ {
		addrs, err := proc.FindFileLocation(rp.tgt, at.file, n)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if a >= fn.Entry && a < fn.End {
				set(a, line{at.file, n})
			}
		}
	}
	if ret := frames[0].Ret; ret != 0 {
		file, n, _ := rp.tgt.BinInfo().PCToLine(ret)
		set(ret, line{file, n})
	}
}

// maxAfter bounds the lines after the last step's line that stopAfter
// looks at.
const maxAfter = 200

// checkTurnEnd ends the current turn once its goroutine has left the
// turn's line: it is held at its next step, stopped elsewhere, or gone.
// A goroutine blocked in its step's operation (a Lock) has not done it:
// a witness places each event where it completes, after what it waits
// for, so a goroutine that blocks there waits for something the witness
// does not order, and the replay is stuck unless that comes freely.
func (rp *replayer) checkTurnEnd(hit map[int64]bool) {
	t := rp.turns[rp.cur]
	id := rp.byW[t.g]
	gs := rp.gs[id]
	done := false
	switch {
	case gs.held != 0:
		done = true
	case hit[id] && (gs.lastLine != t.at || gs.visits[t.at] != gs.grantVisit):
		done = true
	default:
		g, err := proc.FindGoroutine(rp.tgt, id)
		if err != nil || g == nil || g.Status == proc.Gdead {
			done = true
			break
		}
		frames, err := proc.GoroutineStacktrace(rp.tgt, g, maxDepth, 0)
		if err != nil || !whole(frames) || (g.Status != proc.Gwaiting && libraryFrame(frames[0])) {
			// Where it is is not known well enough: the unwinding of a
			// goroutine running in the runtime or the sync package (a
			// Lock spinning before it parks) has been seen to drop the
			// frame of the line that called it. A parked goroutine's
			// unwinding starts where it parked and is whole. Wait for
			// a better look.
			break
		}
		done = true
		for _, f := range frames {
			if f.Call.File == t.at.file && f.Call.Line == t.at.line {
				done = false
				break
			}
		}
	}
	if !done {
		return
	}
	rp.finishWrites()
	rp.granted = false
	rp.cur++
	rp.stuck = 0
	// The goroutine of the next turn may be held already; it is granted
	// when it traps again.
}

// libraryFrame says whether f is a function of the runtime or of the
// standard library packages a program blocks in.
func libraryFrame(f proc.Stackframe) bool {
	if f.Call.Fn == nil {
		return true
	}
	for _, p := range []string{"runtime.", "internal/", "syscall.", "os.", "sync."} {
		if strings.HasPrefix(f.Call.Fn.Name, p) {
			return true
		}
	}
	return false
}

// whole says whether a stack was unwound to the goroutine's start, so
// that a line missing from it is not on the goroutine's stack. Inside
// the runtime (a lock's spinning, a system call) the unwinding can stop
// short.
func whole(frames []proc.Stackframe) bool {
	if len(frames) == 0 {
		return false
	}
	fn := frames[len(frames)-1].Call.Fn
	return fn != nil && fn.Name == "runtime.goexit"
}

// finishWrites reads the values the granted writes left.
func (rp *replayer) finishWrites() {
	for _, pw := range rp.writes {
		if val, ok := rp.read(pw.c); ok {
			rp.values = append(rp.values, Value{Step: pw.step, Expr: pw.expr, Write: true, Value: val})
		}
	}
	rp.writes = rp.writes[:0]
}

// checkStuck declares the schedule stuck when the current turn has not
// ended and every goroutine of the program is held or blocked, several
// looks in a row.
func (rp *replayer) checkStuck() {
	if time.Since(rp.looked) < pollEvery {
		return // held goroutines trap again at once; look at a steady pace
	}
	rp.looked = time.Now()
	all, _, err := proc.GoroutinesInfo(rp.tgt, 0, 0)
	if err != nil {
		return
	}
	rp.match(all)
	for _, g := range all {
		if g.System(rp.tgt) || g.Status == proc.Gdead {
			continue
		}
		if gs := rp.gs[g.ID]; gs != nil && gs.held != 0 {
			continue
		}
		if g.Status != proc.Gwaiting {
			rp.stuck = 0
			return
		}
	}
	rp.stuck++
	if rp.stuck < stuckPolls {
		return
	}
	next := rp.nextG()
	if where, ok := rp.ioWait(next); ok {
		// Not a schedule the witness got wrong: an order the program
		// makes through files, pipes or sockets (the corpus's turn
		// scheduler), which no trace records and no replay may break.
		rp.reason = fmt.Sprintf("the program orders its goroutines itself, through I/O that the trace does not record: %s, whose step comes next, waits for I/O at %s", rp.w.Goroutines[next], where)
		return
	}
	rp.reason = "every goroutine is held or blocked before " + rp.waitingFor()
	if where := rp.whereIs(next); where != "" {
		rp.reason += "; " + where
	}
}

// waitingFor names the next turn's step and goroutine.
func (rp *replayer) waitingFor() string {
	if rp.cur >= len(rp.turns) {
		a, b := rp.meet[0], rp.meet[1]
		return fmt.Sprintf("the goroutines of the race's two accesses stood at them at once (step %d, %s, %s; step %d, %s, %s)",
			a.step, rp.w.Steps[a.step], rp.w.Goroutines[a.g], b.step, rp.w.Steps[b.step], rp.w.Goroutines[b.g])
	}
	t := rp.turns[rp.cur]
	s := rp.w.Steps[t.steps[0]]
	return fmt.Sprintf("step %d (%s, %s)", t.steps[0], s, rp.w.Goroutines[t.g])
}

// whereIs says where witness goroutine w is.
func (rp *replayer) whereIs(w int) string {
	id := rp.byW[w]
	if id == 0 {
		return "that goroutine was never seen"
	}
	g, err := proc.FindGoroutine(rp.tgt, id)
	if err != nil || g == nil || g.Status == proc.Gdead {
		return "that goroutine has ended"
	}
	if gs := rp.gs[id]; gs != nil && gs.held != 0 {
		return "that goroutine is held at another step"
	}
	frames, err := proc.GoroutineStacktrace(rp.tgt, g, maxDepth, 0)
	if err != nil {
		return ""
	}
	for _, f := range frames {
		if f.Call.Fn != nil && !libraryFrame(f) {
			state := "it is"
			if g.Status == proc.Gwaiting {
				state = "it is blocked"
			}
			return fmt.Sprintf("%s at %s:%d in %s", state, shortFile(f.Call.File), f.Call.Line, f.Call.Fn.Name)
		}
	}
	return ""
}

// ioWait says whether witness goroutine w is parked waiting for I/O
// (the runtime's wait reason "IO wait"), and where in the program's own
// code.
func (rp *replayer) ioWait(w int) (string, bool) {
	id := rp.byW[w]
	if id == 0 {
		return "", false
	}
	g, err := proc.FindGoroutine(rp.tgt, id)
	if err != nil || g == nil || g.Status != proc.Gwaiting {
		return "", false
	}
	ver := goversion.ParseProducer(rp.tgt.BinInfo().Producer())
	if api.WaitReasonString(&ver, g.WaitReason) != "IO wait" {
		return "", false
	}
	frames, err := proc.GoroutineStacktrace(rp.tgt, g, maxDepth, 0)
	if err != nil {
		return "", false
	}
	for _, f := range frames {
		if f.Call.Fn != nil && !libraryFrame(f) {
			return fmt.Sprintf("%s:%d in %s", shortFile(f.Call.File), f.Call.Line, f.Call.Fn.Name), true
		}
	}
	return "", false
}

// goroutine returns what the replay knows of g, matching it to the
// witness's goroutines when first seen.
func (rp *replayer) goroutine(g *proc.G) *rgoroutine {
	if gs := rp.gs[g.ID]; gs != nil {
		return gs
	}
	all, _, err := proc.GoroutinesInfo(rp.tgt, 0, 0)
	if err == nil {
		rp.match(all)
	}
	if gs := rp.gs[g.ID]; gs != nil {
		return gs
	}
	return rp.add(g.ID, -1)
}

// match numbers the goroutines not seen before, in the order of their
// ids, per creation, and matches them to the witness's.
func (rp *replayer) match(all []*proc.G) {
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	for _, g := range all {
		if _, ok := rp.gs[g.ID]; ok || g.Status == proc.Gdead {
			continue
		}
		loc := g.Go()
		var key Goroutine
		if loc.Fn != nil && loc.Fn.Name == "testing.(*T).Run" {
			key = Goroutine{Test: true}
		} else {
			key = Goroutine{File: loc.File, Line: loc.Line}
		}
		name := key
		name.Index = rp.counted[key]
		rp.counted[key]++
		w := -1
		for i, wg := range rp.w.Goroutines {
			if wg == name {
				w = i
				rp.byW[i] = g.ID
			}
		}
		rp.add(g.ID, w)
	}
}

func (rp *replayer) add(id int64, w int) *rgoroutine {
	gs := &rgoroutine{w: w, visits: make(map[line]int)}
	rp.gs[id] = gs
	return gs
}

// holdThreads makes every thread whose goroutine is held trap again at
// its breakpoint on the next continue, instead of stepping over it: the
// breakpoint the thread stands at is forgotten, so that the debugger
// resumes it at the trap instruction.
func (rp *replayer) holdThreads() {
	for _, th := range rp.tgt.ThreadList() {
		bs := th.Breakpoint()
		if bs == nil || bs.Breakpoint == nil {
			continue
		}
		g, err := proc.GetG(th)
		if err != nil || g == nil {
			continue
		}
		if gs := rp.gs[g.ID]; gs != nil && gs.held == bs.Addr {
			bs.Clear()
		}
	}
}

// releaseAll lets every goroutine run freely: the breakpoints go.
func (rp *replayer) releaseAll() {
	for _, gs := range rp.gs {
		gs.held = 0
	}
	for a := range rp.bps {
		_ = rp.tgt.ClearBreakpoint(a)
	}
	for a := range rp.exits {
		_ = rp.tgt.ClearBreakpoint(a)
	}
}

// cellOf returns where an integer, boolean, pointer, slice or string
// variable lives. A pointer, channel, map or function value is one word,
// the address it holds, which tells a lazily made value from nil and one
// made value from another; a slice is its header (where its array is,
// its length and capacity), a string its bytes.
func cellOf(v *proc.Variable) (cell, bool) {
	if v.RealType == nil {
		return cell{}, false
	}
	switch v.Kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr, reflect.Bool,
		reflect.Pointer, reflect.UnsafePointer, reflect.Chan, reflect.Map, reflect.Func,
		reflect.Slice, reflect.String:
		return cell{addr: v.Addr, size: v.RealType.Size(), kind: v.Kind}, true
	}
	return cell{}, false
}

// maxString bounds the bytes of a string value a replay shows.
const maxString = 64

// readHeader returns the value of the slice or string header in c: a
// slice's length, capacity and array, or a string's first bytes, quoted.
func (rp *replayer) readHeader(c cell) (string, bool) {
	words := make([]byte, c.size)
	if _, err := rp.tgt.Memory().ReadMemory(words, c.addr); err != nil || c.size < 16 {
		return "", false
	}
	data := binary.LittleEndian.Uint64(words[0:8])
	n := binary.LittleEndian.Uint64(words[8:16])
	if c.kind == reflect.Slice {
		if data == 0 {
			return "nil", true
		}
		return fmt.Sprintf("a slice of length %d, capacity %d at %#x", n, binary.LittleEndian.Uint64(words[16:24]), data), true
	}
	shown := min(n, maxString)
	buf := make([]byte, shown)
	if shown > 0 {
		if _, err := rp.tgt.Memory().ReadMemory(buf, data); err != nil {
			return "", false
		}
	}
	if shown < n {
		return strconv.Quote(string(buf)) + fmt.Sprintf("... (%d bytes)", n), true
	}
	return strconv.Quote(string(buf)), true
}

// read returns the value in c now.
func (rp *replayer) read(c cell) (string, bool) {
	if c.kind == reflect.Slice || c.kind == reflect.String {
		return rp.readHeader(c)
	}
	if c.size <= 0 || c.size > 8 {
		return "", false
	}
	buf := make([]byte, 8)
	if _, err := rp.tgt.Memory().ReadMemory(buf[:c.size], c.addr); err != nil {
		return "", false
	}
	u := binary.LittleEndian.Uint64(buf)
	switch c.kind {
	case reflect.Bool:
		return fmt.Sprint(u != 0), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		shift := 64 - 8*uint(c.size)
		return constant.MakeInt64(int64(u<<shift) >> shift).String(), true
	case reflect.Pointer, reflect.UnsafePointer, reflect.Chan, reflect.Map, reflect.Func:
		if u == 0 {
			return "nil", true
		}
		return fmt.Sprintf("%#x", u), true
	}
	return constant.MakeUint64(u).String(), true
}

func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
