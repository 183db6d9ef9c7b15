package record

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/go-delve/delve/pkg/dwarf/godwarf"
	"github.com/go-delve/delve/pkg/proc"
)

// Channels are recorded at the runtime's functions rather than at the
// program's channel operations, because which message a receive takes is
// decided inside the runtime, under the channel's lock:
//
//   - the transfers happen under the channel's lock, at three functions:
//     runtime.send (a sender hands its message to a waiting receiver),
//     runtime.recv (a receiver takes a waiting sender's message, directly
//     or, on a full buffer, from the buffer's head while the sender's
//     message joins its tail) and runtime.chanbuf (a message enters or
//     leaves the buffer, in chansend, chanrecv and selectgo). Since these
//     run under the lock, their order is the channel's order, and both
//     sides of a transfer are recorded there: the send first, then the
//     receive of the same message. The goroutines on both sides, the one
//     stopped there and the one parked in its operation, are identified
//     from the runtime's structures, and their sites from their stacks
//     (sender, receiver); a plain send or receive needs no probe of its
//     own;
//   - a select is probed at the entry of runtime.selectgo, which says
//     which channels it may send or receive on (the goroutine's pending
//     operation, chanOp);
//   - a close is recorded under the lock too, at closechan's line setting
//     c.closed, so no send can be recorded after it; the plain receives
//     parked on the channel, which the close ends, are recorded right
//     after it.
//
// Messages are numbered per channel in the order they enter it (handed
// over, or put in the buffer), which is the order receives take them: the
// buffer is FIFO and a receiver waits only on an empty one. The recorder
// keeps each buffer's message numbers; a message of a goroutine it does not
// track (the testing package's, a timer's) has no number, and the receive
// that takes it is not recorded. The buffer's length is checked against
// the runtime's count at every operation, so a buffer emptied behind the
// recorder's back (a timer channel's drain) only loses numbers.
//
// A plain receive that returns because its channel is closed is recorded
// where chanrecv returns it (or at the close, if it was parked). A select
// that took no message is recorded as a closed receive when the goroutine
// is next seen, if it was a blocking one with exactly one closed receive
// case; a non-blocking one (with a default case) is not recorded: whether
// it took the default case cannot be told apart.

// chanOpKind is what a pending channel operation is.
type chanOpKind uint8

const (
	opSend chanOpKind = iota + 1
	opRecv
	opSelect
)

// chanOp is the channel operation a goroutine is in.
type chanOp struct {
	kind  chanOpKind
	c     uint64   // the channel, for a send or receive
	sends []uint64 // a select's send and receive cases
	recvs []uint64
	block bool
	site  trace.SiteID
	done  bool // a transfer has completed it
}

// chanState is what the recorder knows of one channel.
type chanState struct {
	// id is the channel in the trace: its address, with a generation in
	// the bits above the address space once a collected channel's address
	// serves a new one, so the new one's messages and close are its own.
	id     trace.ObjID
	cap    uint64
	sent   uint64   // messages numbered so far
	queue  []uint64 // the buffered messages' numbers, oldest first; 0: not numbered
	closed bool     // its close is recorded
}

// layout holds the offsets of the runtime's structures that the recorder
// reads directly: reading a word is much cheaper than evaluating an
// expression.
type layout struct {
	ok                        bool
	qcount, dataqsiz, closed  int64 // runtime.hchan
	sendx, recvx              int64
	sudogG, goid              int64 // runtime.sudog.g, runtime.g.goid
	recvqFirst                int64 // runtime.hchan.recvq.first
	sudogNext, sudogIsSelect  int64
	scaseSize, scaseC, ptrLen int64
}

func fieldOffset(t godwarf.Type, name string) (int64, bool) {
	st, ok := t.(*godwarf.StructType)
	if !ok {
		return 0, false
	}
	for _, f := range st.Field {
		if f.Name == name {
			return f.ByteOffset, true
		}
	}
	return 0, false
}

func readLayout(bi *proc.BinaryInfo) layout {
	var l layout
	hchan, err1 := bi.FindType("runtime.hchan")
	sudog, err2 := bi.FindType("runtime.sudog")
	g, err3 := bi.FindType("runtime.g")
	if err1 != nil || err2 != nil || err3 != nil {
		return l
	}
	ok := true
	get := func(t godwarf.Type, name string) int64 {
		off, found := fieldOffset(t, name)
		ok = ok && found
		return off
	}
	l.qcount, l.dataqsiz, l.closed = get(hchan, "qcount"), get(hchan, "dataqsiz"), get(hchan, "closed")
	l.sendx, l.recvx = get(hchan, "sendx"), get(hchan, "recvx")
	l.sudogG, l.goid = get(sudog, "g"), get(g, "goid")
	l.sudogNext, l.sudogIsSelect = get(sudog, "next"), get(sudog, "isSelect")
	if waitq, err := bi.FindType("runtime.waitq"); err == nil {
		l.recvqFirst = get(hchan, "recvq") + get(waitq, "first")
	} else {
		ok = false
	}
	// A program without a select statement has no selectgo, nor its
	// case type.
	if scase, err := bi.FindType("runtime.scase"); err == nil {
		l.scaseC = get(scase, "c")
		l.scaseSize = scase.Size()
	}
	l.ptrLen = int64(bi.Arch.PtrSize())
	l.ok = ok
	return l
}

// word reads a pointer-sized unsigned word of the program's memory.
func (r *recorder) word(mem proc.MemoryReadWriter, addr uint64) (uint64, bool) {
	var buf [8]byte
	n := int(r.lay.ptrLen)
	if _, err := mem.ReadMemory(buf[:n], addr); err != nil {
		return 0, false
	}
	if n == 4 {
		return uint64(binary.LittleEndian.Uint32(buf[:4])), true
	}
	return binary.LittleEndian.Uint64(buf[:]), true
}

// hchan reads a channel's buffer count and capacity.
func (r *recorder) hchan(mem proc.MemoryReadWriter, c uint64) (qcount, size uint64, ok bool) {
	q, ok1 := r.word(mem, c+uint64(r.lay.qcount))
	s, ok2 := r.word(mem, c+uint64(r.lay.dataqsiz))
	return q, s, ok1 && ok2
}

// pointerArg evaluates a pointer argument of the function a goroutine
// stopped at the entry of.
func pointerArg(scope *proc.EvalScope, name string) uint64 {
	v, err := scope.EvalExpression("*"+name, loadScalar)
	if err != nil || v.Addr >= proc.FakeAddressBase {
		return 0
	}
	return v.Addr
}

func intArg(scope *proc.EvalScope, name string) (uint64, bool) {
	v, err := scope.EvalExpression(name, loadScalar)
	if err != nil {
		return 0, false
	}
	return scalar(v)
}

// chanObj returns the recorder's state of the channel at address c,
// declaring it in the trace on its first use, with its capacity. With mem,
// it checks that the channel is still the one it knows: a channel that
// was closed, or had another capacity, is a collected one whose address
// the runtime gave to a new channel.
func (r *recorder) chanObj(mem proc.MemoryReadWriter, c uint64, at Line) *chanState {
	st := r.chans[c]
	if mem != nil {
		size, ok1 := r.word(mem, c+uint64(r.lay.dataqsiz))
		closed, ok2 := r.u32(mem, c+uint64(r.lay.closed))
		if st != nil && ok1 && ok2 && (st.closed && closed == 0 || size != st.cap) {
			st = nil
		}
		if st == nil && ok1 {
			gen := r.chanGen[c]
			r.chanGen[c] = gen + 1
			st = &chanState{id: trace.ObjID(c | gen<<48), cap: size}
			r.chans[c] = st
		}
	}
	if st == nil {
		st = &chanState{id: trace.ObjID(c)}
		r.chans[c] = st
	}
	if _, ok := r.t.Objects[st.id]; !ok && at.File != "" {
		r.t.Objects[st.id] = trace.Object{Kind: trace.ObjChan, Name: fmt.Sprintf("chan@%s:%d", shortFile(at.File), at.Line), Cap: int(st.cap)}
	}
	return st
}

func (r *recorder) u32(mem proc.MemoryReadWriter, addr uint64) (uint32, bool) {
	var buf [4]byte
	if _, err := mem.ReadMemory(buf[:], addr); err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint32(buf[:]), true
}

// chanEntry records the start of a channel operation by a goroutine of
// the packages under test.
func (r *recorder) chanEntry(gs *gstate, scope *proc.EvalScope, mem proc.MemoryReadWriter, name string, site trace.SiteID, at Line) {
	if !r.lay.ok {
		return
	}
	switch name {
	case "runtime.selectgo":
		if r.lay.scaseSize == 0 {
			return
		}
		cas0 := pointerArg(scope, "cas0")
		nsends, ok1 := intArg(scope, "nsends")
		nrecvs, ok2 := intArg(scope, "nrecvs")
		block, ok3 := intArg(scope, "block")
		if cas0 == 0 || !ok1 || !ok2 || !ok3 || nsends+nrecvs > 1<<16 {
			return
		}
		op := &chanOp{kind: opSelect, block: block == 1, site: site}
		for i := range nsends + nrecvs {
			c, ok := r.word(mem, cas0+i*uint64(r.lay.scaseSize)+uint64(r.lay.scaseC))
			if !ok {
				return
			}
			if c == 0 {
				continue // a nil channel's case is never chosen
			}
			r.chanObj(mem, c, at)
			if i < nsends {
				op.sends = append(op.sends, c)
			} else {
				op.recvs = append(op.recvs, c)
			}
		}
		gs.chanOp = op
	case "runtime.closechan":
		c := pointerArg(scope, "c")
		if c == 0 {
			return
		}
		r.chanObj(mem, c, at)
		gs.closing, gs.closeSite = c, site
	}
}

// opOf returns the state of goroutine gid if it is in a recorded
// operation that can send (or receive) on c, and marks the operation done.
func (r *recorder) opOf(gid trace.GoID, c uint64, send bool) *gstate {
	gs := r.gs[gid]
	if gs == nil || gs.ended || gs.chanOp == nil || gs.chanOp.done {
		return nil
	}
	op := gs.chanOp
	switch {
	case op.kind == opSend && send, op.kind == opRecv && !send:
		if op.c != c {
			return nil
		}
	case op.kind == opSelect:
		list := op.recvs
		if send {
			list = op.sends
		}
		if !slices.Contains(list, c) {
			return nil
		}
	default:
		return nil
	}
	op.done = true
	return gs
}

// sender and receiver return the state of goroutine gid sending (or
// receiving) on c, with the operation as its channel operation, or nil if
// the operation is not recorded. A select is probed at its entry; a plain
// send or receive is not, to save a stop per message: it is seen first
// where its message changes hands, where the goroutine is the one stopped
// (g and frames are its) or one parked in the operation (g is nil).
// Either way, what the goroutine did before is recorded first.
func (r *recorder) sender(gid trace.GoID, c uint64, g *proc.G, frames []proc.Stackframe) *gstate {
	return r.party(gid, c, true, g, frames)
}

func (r *recorder) receiver(gid trace.GoID, c uint64, g *proc.G, frames []proc.Stackframe) *gstate {
	return r.party(gid, c, false, g, frames)
}

func (r *recorder) party(gid trace.GoID, c uint64, send bool, g *proc.G, frames []proc.Stackframe) *gstate {
	if gs := r.opOf(gid, c, send); gs != nil {
		return gs // a select
	}
	if gs := r.gs[gid]; gs != nil && gs.ended {
		return nil
	}
	if g == nil {
		var err error
		if g, err = proc.FindGoroutine(r.tgt, int64(gid)); err != nil || g == nil {
			return nil
		}
		if frames, err = proc.GoroutineStacktrace(r.tgt, g, maxDepth, 0); err != nil {
			return nil
		}
	}
	user := r.userFrame(frames)
	if user < 0 {
		return nil
	}
	gs := r.goroutine(gid, g)
	if gs == nil {
		return nil
	}
	r.catchUp(gs, frames, bpRole{}, user)
	uf := frames[user].Call
	at := Line{uf.File, uf.Line}
	r.chanObj(r.tgt.Memory(), c, at)
	kind := opRecv
	if send {
		kind = opSend
	}
	gs.chanOp = &chanOp{kind: kind, c: c, block: true, site: r.site(at, 0, fnName(uf.Fn)), done: true}
	return gs
}

// closedReceivers records the receive of each goroutine parked in a plain
// receive on c, which c's close, under way, ends: they return with no
// message. (A select parked on c is recorded when it is next seen; see
// endChanOp.)
func (r *recorder) closedReceivers(mem proc.MemoryReadWriter, c uint64, st *chanState) {
	sg, ok := r.word(mem, c+uint64(r.lay.recvqFirst))
	for n := 0; ok && sg != 0 && n < 1<<16; n++ {
		var sel [1]byte
		if _, err := mem.ReadMemory(sel[:], sg+uint64(r.lay.sudogIsSelect)); err != nil {
			return
		}
		gp, ok1 := r.word(mem, sg+uint64(r.lay.sudogG))
		gid, ok2 := r.word(mem, gp+uint64(r.lay.goid))
		if sel[0] == 0 && ok1 && ok2 {
			if gs := r.receiver(trace.GoID(gid), c, nil, nil); gs != nil {
				r.emit(gs, trace.Event{Kind: trace.KindRecv, Obj: st.id, Site: gs.chanOp.site})
			}
		}
		sg, ok = r.word(mem, sg+uint64(r.lay.sudogNext))
	}
}

// chanHook handles a stop at one of the runtime's channel transfer points
// (see the top of this file), for any goroutine.
func (r *recorder) chanHook(th proc.Thread, g *proc.G, frames []proc.Stackframe, hook hookKind) {
	if !r.lay.ok {
		return
	}
	mem := th.ProcessMemory()
	scope := proc.FrameToScope(r.tgt, mem, g, th.ThreadID(), frames...)
	cur := trace.GoID(g.ID)
	c := pointerArg(scope, "c")
	if c == 0 {
		return
	}
	st := r.chanObj(mem, c, Line{})
	switch hook {
	case hookClosed:
		gs := r.gs[cur]
		if gs != nil && !gs.ended && gs.closing == c {
			gs.closing = 0
			r.chanAccess(gs, st, gs.closeSite, true)
			r.emit(gs, trace.Event{Kind: trace.KindClose, Obj: st.id, Site: gs.closeSite})
			st.closed = r.invalid == ""
			if st.closed {
				r.closedReceivers(mem, c, st)
			}
		}
	case hookRecvClosed:
		// chanrecv returns with no message: c is closed and empty.
		if st.closed {
			if gs := r.receiver(cur, c, g, frames); gs != nil {
				r.emit(gs, trace.Event{Kind: trace.KindRecv, Obj: st.id, Site: gs.chanOp.site})
			}
		}
	case hookSendDirect, hookRecvDirect:
		sg := pointerArg(scope, "sg")
		gp, ok1 := r.word(mem, sg+uint64(r.lay.sudogG))
		other, ok2 := r.word(mem, gp+uint64(r.lay.goid))
		if sg == 0 || !ok1 || !ok2 {
			return
		}
		if hook == hookSendDirect {
			r.handoff(c, r.sender(cur, c, g, frames), r.receiver(trace.GoID(other), c, nil, nil))
			return
		}
		qcount, size, ok := r.hchan(mem, c)
		if !ok {
			return
		}
		if size == 0 {
			rgs := r.receiver(cur, c, g, frames)
			r.handoff(c, r.sender(trace.GoID(other), c, nil, nil), rgs)
			return
		}
		// A full buffer: the receiver takes its head, the waiting sender's
		// message joins its tail.
		r.dequeue(c, r.receiver(cur, c, g, frames), qcount)
		r.enqueue(c, r.sender(trace.GoID(other), c, nil, nil), qcount-1)
	case hookChanBuf:
		if len(frames) < 2 || frames[1].Call.Fn == nil {
			return
		}
		qcount, size, ok := r.hchan(mem, c)
		if !ok {
			return
		}
		switch frames[1].Call.Fn.Name {
		case "runtime.chansend":
			r.enqueue(c, r.sender(cur, c, g, frames), qcount)
		case "runtime.chanrecv":
			r.dequeue(c, r.receiver(cur, c, g, frames), qcount)
		case "runtime.timerchandrain":
			r.dequeue(c, nil, qcount)
		case "runtime.selectgo":
			// selectgo indexes the buffer at sendx to send and at recvx to
			// receive; they are equal only when the buffer is empty (only
			// a send can proceed) or full (only a receive can).
			i, ok := intArg(scope, "i")
			sendx, ok1 := r.word(mem, c+uint64(r.lay.sendx))
			recvx, ok2 := r.word(mem, c+uint64(r.lay.recvx))
			if !ok || !ok1 || !ok2 {
				return
			}
			send := i == sendx && (qcount == 0 || i != recvx)
			if qcount == size {
				send = false
			}
			if send {
				r.enqueue(c, r.opOf(cur, c, true), qcount)
			} else {
				r.dequeue(c, r.opOf(cur, c, false), qcount)
			}
		}
	}
}

// resync makes the recorder's buffer as long as the runtime's, when a
// buffer changed without it (its messages lose their numbers).
func (st *chanState) resync(qcount uint64) {
	if uint64(len(st.queue)) != qcount {
		st.queue = make([]uint64, qcount)
	}
}

// handoff records a message passed from a sender straight to a waiting
// receiver (either nil if not recorded).
func (r *recorder) handoff(c uint64, sgs, rgs *gstate) {
	st := r.chanObj(nil, c, Line{})
	if sgs == nil {
		return
	}
	st.sent++
	r.chanAccess(sgs, st, sgs.chanOp.site, false)
	r.emit(sgs, trace.Event{Kind: trace.KindSend, Obj: st.id, Arg: st.sent, Site: sgs.chanOp.site})
	if rgs != nil {
		r.emit(rgs, trace.Event{Kind: trace.KindRecv, Obj: st.id, Arg: st.sent, Site: rgs.chanOp.site})
	}
}

// enqueue records a message of a sender (nil if not recorded) entering
// c's buffer, which holds qcount messages before it.
func (r *recorder) enqueue(c uint64, gs *gstate, qcount uint64) {
	st := r.chanObj(nil, c, Line{})
	st.resync(qcount)
	if gs == nil {
		st.queue = append(st.queue, 0)
		return
	}
	st.sent++
	st.queue = append(st.queue, st.sent)
	r.chanAccess(gs, st, gs.chanOp.site, false)
	r.emit(gs, trace.Event{Kind: trace.KindSend, Obj: st.id, Arg: st.sent, Site: gs.chanOp.site})
}

// dequeue records a receive (nil if not recorded) taking the head of c's
// buffer, which holds qcount messages before it.
func (r *recorder) dequeue(c uint64, gs *gstate, qcount uint64) {
	st := r.chanObj(nil, c, Line{})
	st.resync(qcount)
	if len(st.queue) == 0 {
		return
	}
	n := st.queue[0]
	st.queue = st.queue[1:]
	if gs != nil && n != 0 {
		r.emit(gs, trace.Event{Kind: trace.KindRecv, Obj: st.id, Arg: n, Site: gs.chanOp.site})
	}
}

// endChanOp ends the goroutine's channel operation, which has returned: a
// blocking receive that took no message returned because its channel was
// closed.
func (r *recorder) endChanOp(gs *gstate) {
	op := gs.chanOp
	if op == nil {
		return
	}
	gs.chanOp = nil
	if op.done || !op.block {
		return
	}
	var closed []uint64
	switch op.kind {
	case opRecv:
		closed = append(closed, op.c)
	case opSelect:
		for _, c := range op.recvs {
			if st := r.chans[c]; st != nil && st.closed && !slices.Contains(closed, c) {
				closed = append(closed, c)
			}
		}
	}
	if len(closed) != 1 {
		return // not a closed receive, or one of several closed channels
	}
	if st := r.chans[closed[0]]; st != nil && st.closed {
		r.emit(gs, trace.Event{Kind: trace.KindRecv, Obj: st.id, Site: op.site})
	}
}

// sourceLines finds the lines of a function of the program's runtime or
// standard library whose code (trimmed, less any comment after it) is
// text, for the recorder's probes inside them. It returns none if the source is not there.
func sourceLines(bi *proc.BinaryInfo, fn, text string) (string, []int) {
	fns, err := bi.FindFunction(fn)
	if err != nil || len(fns) == 0 {
		return "", nil
	}
	file, first := bi.EntryLineForFunc(fns[0])
	data, err := os.ReadFile(file)
	if err != nil {
		return "", nil
	}
	lines := strings.Split(string(data), "\n")
	var found []int
	for i := first; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "}") {
			break
		}
		// The code of the line, less any comment after it.
		code, _, _ := strings.Cut(lines[i], "//")
		if strings.TrimSpace(code) == text {
			found = append(found, i+1)
		}
	}
	return file, found
}
