package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// RAPID's STD format (see docs/trace-formats.md) has one event per line,
// THREAD|OP(OPERAND)|LOCATION. Its threads, variables and locks are
// names; avcheck reads T<n> as goroutine n and V<n> and L<n> as object n,
// so that an exported trace reads back with the same ids, and gives any
// other name a fresh id at or above these bounds, which the numeric forms
// never reach.
const (
	stdFreshGo  = 1 << 31
	stdFreshObj = 1 << 48
)

// stdJoinPrefix names the channel a join is modelled with: the child
// closes it as it ends and the parent receives from it, the Go idiom for
// waiting for a goroutine (close happens before a receive that returns
// because of it). The colon keeps it from being a Go expression.
const stdJoinPrefix = "join:"

// The namespaces of STD objects, in STDReader.ns.
const (
	nsNone = iota
	nsVar
	nsLock
)

// denseIDs bounds the object ids STDReader.ns covers: 4 MiB at most, for
// the ids an export from a generated or recorded trace uses.
const denseIDs = 1 << 22

func nsOf(k ObjKind) byte {
	if isVarKind(k) {
		return nsVar
	}
	return nsLock
}

// STDReader reads RAPID's STD format. It holds the goroutine and object
// tables, not the events.
type STDReader struct {
	name string
	br   *bufio.Reader
	line int
	long []byte
	err  error
	seq  uint64

	// declarations holds the side table's sites and objects, and the
	// objects named only by their STD names.
	declarations
	// varByName and lockByName map the names that are not V<n> or L<n>,
	// or whose number is taken by an object of the other namespace: STD
	// variables and locks are separate namespaces.
	varByName  map[string]ObjID
	lockByName map[string]ObjID
	fromTable  map[ObjID]bool // ids the table declared
	// ns records, for ids below denseIDs, the namespace of each object
	// seen (nsVar or nsLock), so that the common case needs no hashing.
	ns        []byte
	bigIDs    [1024]bigID // object ids at or above denseIDs that object took as they are
	goByName  map[string]GoID
	freshObj  ObjID
	freshGo   GoID
	pending   []Event // events a join expands into, not yet returned
	ended     map[GoID]bool
	regions   map[GoID]*[]uint64 // open transactions' instances, per goroutine
	smallRegs []*[]uint64        // the same for small GoIDs, without hashing
	nextInst  uint64
	anyRegion bool
	slowOnly  bool // tests turn fastParse off to compare it with parse
}

// NewSTDReader returns a reader of RAPID's STD format from r; name is the
// file name its errors give.
func NewSTDReader(r io.Reader, name string) *STDReader {
	return &STDReader{
		name:         name,
		br:           bufio.NewReaderSize(r, 1<<16),
		declarations: newDeclarations(),
		varByName:    make(map[string]ObjID),
		lockByName:   make(map[string]ObjID),
		freshObj:     stdFreshObj,
		freshGo:      stdFreshGo,
	}
}

// ReadTable reads the site and object table an STD export writes beside
// the trace (a text-format trace holding only declarations). Call it
// before the first Next.
func (r *STDReader) ReadTable(tr io.Reader, name string) error {
	t := NewTextReader(tr, name)
	e, err := t.Next()
	if err == nil {
		return &FormatError{File: name, Line: t.line, Msg: fmt.Sprintf("unexpected event %q in a site table", e.String())}
	}
	if !errors.Is(err, io.EOF) {
		return err
	}
	r.sites = t.sites
	r.fromTable = make(map[ObjID]bool)
	for id, o := range t.objs {
		r.setObj(id, o)
		r.fromTable[id] = true
	}
	return nil
}

func (r *STDReader) errorf(format string, args ...any) error {
	r.err = &FormatError{File: r.name, Line: r.line, Msg: fmt.Sprintf(format, args...)}
	return r.err
}

// Next returns the next event, or io.EOF after the last one.
func (r *STDReader) Next() (Event, error) {
	var e Event
	err := r.nextInto(&e)
	return e, err
}

// nextInto is Next storing the event in *e, which it overwrites whole:
// ReadAhead parses into its batch's array directly, instead of copying
// every event out of Next and into the array.
func (r *STDReader) nextInto(e *Event) error {
	if len(r.pending) > 0 {
		*e = r.pending[0]
		r.pending = r.pending[1:]
		return nil
	}
	if r.err != nil {
		*e = Event{}
		return r.err
	}
	for {
		line, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.long = append(r.long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.br.ReadSlice('\n')
				r.long = append(r.long, line...)
				if len(r.long) > maxLine {
					r.line++
					*e = Event{}
					return r.errorf("line longer than %d bytes", maxLine)
				}
			}
			line = r.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			r.err = err
			*e = Event{}
			return err
		}
		if len(line) == 0 {
			*e = Event{}
			return io.EOF
		}
		r.line++
		if n := len(line); line[n-1] == '\n' {
			line = line[:n-1]
			if n > 1 && line[n-2] == '\r' {
				line = line[:n-2]
			}
		}
		for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t') {
			line = line[:len(line)-1] // editors leave these
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if !r.slowOnly && r.fastParse(line, e) {
			return nil
		}
		*e, err = r.parse(line)
		return err
	}
}

func (r *STDReader) parse(line []byte) (Event, error) {
	// One pass over the line finds both bars and the parenthesis: lines
	// are short, and this is faster than three IndexByte calls.
	bar1 := 0
	for bar1 < len(line) && line[bar1] != '|' {
		bar1++
	}
	if bar1 == len(line) {
		return Event{}, r.errorf("want THREAD|OP(OPERAND)|LOCATION, found %q", line)
	}
	paren, nparens := -1, 0
	bar2 := bar1 + 1
	for ; bar2 < len(line) && line[bar2] != '|'; bar2++ {
		if c := line[bar2]; c == '(' || c == ')' {
			nparens++
			if c == '(' && paren < 0 {
				paren = bar2
			}
		}
	}
	if bar2 == len(line) {
		return Event{}, r.errorf("want three fields separated by |, found %q", line)
	}
	thread, op, loc := line[:bar1], line[bar1+1:bar2], line[bar2+1:]
	var e Event
	n, ok := parseUint(loc)
	if !ok || n > 1<<32-1 {
		if bytes.IndexByte(loc, '|') >= 0 {
			return Event{}, r.errorf("want exactly three fields separated by |, found %q", line)
		}
		return Event{}, r.errorf("location must be a non-negative integer, found %q", loc)
	}
	e.Site = SiteID(n)
	if e.G, ok = r.goroutine(thread); !ok {
		return Event{}, r.errorf("bad thread %q", thread)
	}
	name, operand := op, []byte(nil)
	if paren >= 0 {
		if op[len(op)-1] != ')' {
			return Event{}, r.errorf("missing ) in %q", op)
		}
		p := paren - (bar1 + 1)
		name, operand = op[:p], op[p+1:len(op)-1]
	}
	switch string(name) {
	case "r":
		e.Kind = KindRead
	case "w":
		e.Kind = KindWrite
	case "acq":
		e.Kind = KindAcquire
	case "rel":
		e.Kind = KindRelease
	case "fork":
		e.Kind = KindFork
	case "join":
		e.Kind = KindRecv // see stdJoinPrefix
	case "begin":
		e.Kind = KindRegionBegin
	case "end":
		e.Kind = KindRegionEnd
	default:
		return Event{}, r.errorf("unknown STD operation %q (want r, w, acq, rel, fork, join, begin or end)", name)
	}
	switch e.Kind {
	case KindRegionBegin, KindRegionEnd:
		// RAPID's transactions are anonymous; an operand, if any, is
		// ignored.
	default:
		if len(operand) == 0 {
			return Event{}, r.errorf("%s needs an operand in parentheses", name)
		}
		if nparens != 2 { // the operand's own, so none inside it

			return Event{}, r.errorf("bad operand %q", operand)
		}
	}
	switch e.Kind {
	case KindRead, KindWrite:
		e.Obj = r.object(operand, 'V', ObjVar)
	case KindAcquire, KindRelease:
		e.Obj = r.object(operand, 'L', ObjMutex)
	case KindFork:
		c, ok := r.goroutine(operand)
		if !ok {
			return Event{}, r.errorf("bad thread %q", operand)
		}
		e.Arg = uint64(c)
	}
	r.setRegion(&e)
	if string(name) == "join" {
		return r.join(e, operand)
	}
	e.Seq = r.seq
	r.seq++
	return e, nil
}

// fastParse parses the common lines, T<n>|r(V<n>)|<loc> and the same
// for w, acq(L<n>), rel(L<n>) and fork(T<n>), in one pass over the line.
// It reports false for any other line, which parse then handles; for the
// lines it accepts, parse gives the same event (FuzzSTD checks that).
func (r *STDReader) fastParse(line []byte, e *Event) bool {
	*e = Event{}
	n := len(line)
	if n < 9 || line[0] != 'T' {
		return false
	}
	// The thread: at most 9 digits, so below stdFreshGo.
	i := 1
	var g uint64
	for ; i < n && i <= 9 && isDigit(line[i]); i++ {
		g = g*10 + uint64(line[i]-'0')
	}
	if i == 1 || i >= n || line[i] != '|' {
		return false
	}
	i++
	if i+1 >= n {
		return false
	}
	if line[i] == 'b' || line[i] == 'e' {
		return r.fastRegion(line[i:], GoID(g), e)
	}
	var prefix byte
	switch {
	case line[i] == 'r' && line[i+1] == '(':
		e.Kind, prefix, i = KindRead, 'V', i+2
	case line[i] == 'w' && line[i+1] == '(':
		e.Kind, prefix, i = KindWrite, 'V', i+2
	case i+4 <= n && string(line[i:i+4]) == "acq(":
		e.Kind, prefix, i = KindAcquire, 'L', i+4
	case i+4 <= n && string(line[i:i+4]) == "rel(":
		e.Kind, prefix, i = KindRelease, 'L', i+4
	case i+5 <= n && string(line[i:i+5]) == "fork(":
		e.Kind, prefix, i = KindFork, 'T', i+5
	default:
		return false
	}
	if i >= n || line[i] != prefix {
		return false
	}
	name := i
	i++
	// The operand's number: a thread's at most 9 digits, below
	// stdFreshGo; an object's at most 19, which fit in 64 bits (those at
	// or above denseIDs, which tracegen's namespaces give, are object's
	// to map).
	digits := 19
	if prefix == 'T' {
		digits = 9
	}
	start := i
	var id uint64
	for ; i < n && i-start < digits && isDigit(line[i]); i++ {
		id = id*10 + uint64(line[i]-'0')
	}
	if i == start || i+1 >= n || line[i] != ')' || line[i+1] != '|' {
		return false
	}
	operand := line[name:i]
	i += 2
	loc, ok := fastLoc(line[i:])
	if !ok {
		return false
	}
	e.G, e.Site = GoID(g), loc
	switch prefix {
	case 'T':
		e.Arg = id
	case 'V':
		e.Obj = r.fastObject(id, operand, nsVar, ObjVar)
	default:
		e.Obj = r.fastObject(id, operand, nsLock, ObjMutex)
	}
	r.setRegion(e)
	e.Seq = r.seq
	r.seq++
	return true
}

// fastObject is object for the operand prefix<id> of namespace ns
// (nsVar or nsLock, kind's): ids below denseIDs that ns says are taken
// as they are, and so are the larger ids that object took as they are
// before, which bigIDs remembers (a map lookup and a parse fewer per
// event on traces whose objects are numbered from 2^32).
func (r *STDReader) fastObject(id uint64, operand []byte, ns byte, kind ObjKind) ObjID {
	if id < uint64(len(r.ns)) {
		if r.ns[id] == ns {
			return ObjID(id)
		}
		return r.object(operand, operand[0], kind)
	}
	slot := &r.bigIDs[id%uint64(len(r.bigIDs))]
	if slot.id == id+1 && slot.ns == ns {
		return ObjID(id)
	}
	o := r.object(operand, operand[0], kind)
	if id >= denseIDs && o == ObjID(id) {
		*slot = bigID{id + 1, ns}
	}
	return o
}

// bigID is an entry of STDReader.bigIDs: id+1 (0 for none) and its
// namespace.
type bigID struct {
	id uint64
	ns byte
}

// fastRegion is fastParse for the rest of a line T<n>|begin|<loc> or
// T<n>|end|<loc>, rest starting at the operation, of goroutine g: a
// transaction without an operand (one with an operand, which parse
// ignores, is left to parse).
func (r *STDReader) fastRegion(rest []byte, g GoID, e *Event) bool {
	switch {
	case len(rest) > 6 && string(rest[:6]) == "begin|":
		e.Kind, rest = KindRegionBegin, rest[6:]
	case len(rest) > 4 && string(rest[:4]) == "end|":
		e.Kind, rest = KindRegionEnd, rest[4:]
	default:
		return false
	}
	loc, ok := fastLoc(rest)
	if !ok {
		return false
	}
	e.G, e.Site = g, loc
	r.setRegion(e)
	e.Seq = r.seq
	r.seq++
	return true
}

// fastLoc parses a line's location, the rest of it: at most 10 digits,
// at most 2^32-1. It reports false for any other (parse says what is
// wrong with it).
func fastLoc(b []byte) (SiteID, bool) {
	var loc uint64
	for i, c := range b {
		if i == 10 || !isDigit(c) {
			return 0, false
		}
		loc = loc*10 + uint64(c-'0')
	}
	if len(b) == 0 || loc > 1<<32-1 {
		return 0, false
	}
	return SiteID(loc), true
}

// setRegion gives e, of goroutine e.G, its transaction: a begin opens a
// new instance, an end closes the innermost open one, and any other
// event belongs to the outermost open one, as with nested lock scopes.
// RAPID's transactions are anonymous: all are region 1.
func (r *STDReader) setRegion(e *Event) {
	switch e.Kind {
	case KindRegionBegin:
		r.anyRegion = true
		r.nextInst++
		open := r.openRegions(e.G)
		*open = append(*open, r.nextInst)
		e.Region, e.Inst = 1, r.nextInst
	case KindRegionEnd:
		if open := r.openRegions(e.G); len(*open) > 0 {
			s := *open
			e.Region, e.Inst = 1, s[len(s)-1]
			*open = s[:len(s)-1]
		}
	default:
		if !r.anyRegion {
			return
		}
		if open := r.openRegions(e.G); len(*open) > 0 {
			e.Region, e.Inst = 1, (*open)[0]
		}
	}
}

// openRegions returns the stack of g's open transactions.
func (r *STDReader) openRegions(g GoID) *[]uint64 {
	if g < 1<<16 {
		if int(g) >= len(r.smallRegs) {
			r.smallRegs = append(r.smallRegs, make([]*[]uint64, int(g)+1-len(r.smallRegs))...)
		}
		if r.smallRegs[g] == nil {
			r.smallRegs[g] = new([]uint64)
		}
		return r.smallRegs[g]
	}
	if r.regions == nil {
		r.regions = make(map[GoID]*[]uint64)
	}
	s := r.regions[g]
	if s == nil {
		s = new([]uint64)
		r.regions[g] = s
	}
	return s
}

// join expands a join into the child's close and end and the parent's
// receive (see stdJoinPrefix).
func (r *STDReader) join(e Event, operand []byte) (Event, error) {
	child, ok := r.goroutine(operand)
	if !ok {
		return Event{}, r.errorf("bad thread %q", operand)
	}
	ch := r.named([]byte(stdJoinPrefix+"T"+strconv.FormatUint(uint64(child), 10)), ObjChan)
	if r.ended == nil {
		r.ended = make(map[GoID]bool)
	}
	if !r.ended[child] {
		r.ended[child] = true
		r.pending = append(r.pending,
			Event{G: child, Kind: KindClose, Obj: ch, Site: e.Site},
			Event{G: child, Kind: KindEnd, Site: e.Site})
	}
	e.Obj, e.Arg = ch, 0
	r.pending = append(r.pending, e)
	for i := range r.pending {
		r.pending[i].Seq = r.seq
		r.seq++
	}
	first := r.pending[0]
	r.pending = r.pending[1:]
	return first, nil
}

// goroutine maps a thread name to a GoID.
func (r *STDReader) goroutine(name []byte) (GoID, bool) {
	if len(name) == 0 {
		return 0, false
	}
	if len(name) > 1 && name[0] == 'T' && isDigit(name[1]) {
		if n, ok := parseUint(name[1:]); ok && n < stdFreshGo {
			return GoID(n), true
		}
	}
	if g, ok := r.goByName[string(name)]; ok {
		return g, true
	}
	if r.freshGo == 1<<32-1 {
		return 0, false
	}
	if r.goByName == nil {
		r.goByName = make(map[string]GoID)
	}
	g := r.freshGo
	r.freshGo++
	r.goByName[string(name)] = g
	return g, true
}

// object maps a variable or lock name to an ObjID: prefix<n> is object n
// unless n is already an object of the other namespace.
func (r *STDReader) object(name []byte, prefix byte, kind ObjKind) ObjID {
	if len(name) > 1 && name[0] == prefix && isDigit(name[1]) {
		if n, ok := parseUint(name[1:]); ok && n < denseIDs {
			if int(n) < len(r.ns) {
				switch r.ns[n] {
				case nsOf(kind):
					return ObjID(n)
				case nsNone:
					r.setObj(ObjID(n), Object{Kind: kind, Name: string(name)})
					return ObjID(n)
				}
				return r.named(name, kind)
			}
			r.setObj(ObjID(n), Object{Kind: kind, Name: string(name)})
			return ObjID(n)
		} else if ok {
			id := ObjID(n)
			o, seen := r.objs[id]
			if !seen && n < stdFreshObj {
				r.objs[id] = Object{Kind: kind, Name: string(name)}
				return id
			}
			// An id at or above stdFreshObj is only taken as is when the
			// table declares it: it was a fresh id when exported.
			if seen && (n < stdFreshObj || r.fromTable[id]) && isVarKind(o.Kind) == (kind == ObjVar) {
				return id
			}
		}
	}
	return r.named(name, kind)
}

// named maps a name that is not prefix<n> (or whose n is taken) to an
// ObjID in the namespace of kind: variables, or locks and channels.
func (r *STDReader) named(name []byte, kind ObjKind) ObjID {
	m := r.lockByName
	if isVarKind(kind) {
		m = r.varByName
	}
	if id, ok := m[string(name)]; ok {
		return id
	}
	for {
		if _, taken := r.objs[r.freshObj]; !taken {
			break
		}
		r.freshObj++
	}
	id := r.freshObj
	r.freshObj++
	m[string(name)] = id
	r.setObj(id, Object{Kind: kind, Name: string(name)})
	return id
}

// setObj records an object, and its namespace if its id is dense.
func (r *STDReader) setObj(id ObjID, o Object) {
	r.objs[id] = o
	if id < denseIDs {
		if int(id) >= len(r.ns) {
			r.ns = append(r.ns, make([]byte, int(id)+1-len(r.ns))...)
		}
		r.ns[id] = nsOf(o.Kind)
	}
}

func isVarKind(k ObjKind) bool { return k == ObjVar || k == ObjUnknown }

// STDWriter exports a trace in RAPID's STD format, and its sites and
// objects as a table in the text format. Go operations without an STD
// counterpart are encoded as documented in docs/trace-formats.md.
type STDWriter struct {
	w     *bufio.Writer
	table *TextWriter
	objs  map[ObjID]Object
}

// NewSTDWriter returns a writer of the STD format to w that writes the
// site and object table to table, which may be nil to drop it.
func NewSTDWriter(w io.Writer, table io.Writer) *STDWriter {
	sw := &STDWriter{w: bufio.NewWriterSize(w, 256<<10), objs: make(map[ObjID]Object)}
	if table != nil {
		sw.table = NewTextWriter(table)
	}
	return sw
}

// DeclareSite records a site in the table.
func (w *STDWriter) DeclareSite(id SiteID, s Site) error {
	if w.table == nil {
		return nil
	}
	return w.table.DeclareSite(id, s)
}

// DeclareObject records an object in the table. Channels, WaitGroups,
// Conds and Onces become locks in STD, so the table calls them mutexes.
func (w *STDWriter) DeclareObject(id ObjID, o Object) error {
	w.objs[id] = o
	if w.table == nil {
		return nil
	}
	switch o.Kind {
	case ObjChan, ObjWaitGroup, ObjCond, ObjOnce, ObjRWMutex:
		if w.isJoin(o) {
			return nil
		}
		o.Kind, o.Cap = ObjMutex, 0
	}
	return w.table.DeclareObject(id, o)
}

func (w *STDWriter) isJoin(o Object) bool {
	return o.Kind == ObjChan && len(o.Name) > len(stdJoinPrefix) && o.Name[:len(stdJoinPrefix)] == stdJoinPrefix
}

func (w *STDWriter) line(g GoID, op string, prefix byte, id uint64, site SiteID) error {
	b := w.w.AvailableBuffer()
	b = append(b, 'T')
	b = strconv.AppendUint(b, uint64(g), 10)
	b = append(b, '|')
	b = append(b, op...)
	if prefix != 0 {
		b = append(b, '(', prefix)
		b = strconv.AppendUint(b, id, 10)
		b = append(b, ')')
	}
	b = append(b, '|')
	b = strconv.AppendUint(b, uint64(site), 10)
	b = append(b, '\n')
	_, err := w.w.Write(b)
	return err
}

// Write writes the STD lines of one event.
func (w *STDWriter) Write(e Event) error {
	id := uint64(e.Obj)
	switch e.Kind {
	case KindRead:
		return w.line(e.G, "r", 'V', id, e.Site)
	case KindWrite:
		return w.line(e.G, "w", 'V', id, e.Site)
	case KindAcquire:
		return w.line(e.G, "acq", 'L', id, e.Site)
	case KindRelease:
		return w.line(e.G, "rel", 'L', id, e.Site)
	case KindFork:
		return w.line(e.G, "fork", 'T', e.Arg, e.Site)
	case KindRegionBegin:
		return w.line(e.G, "begin", 0, 0, e.Site)
	case KindRegionEnd:
		return w.line(e.G, "end", 0, 0, e.Site)
	case KindEnd:
		return nil // STD has no goroutine end; a join implies it
	case KindAtomicLoad, KindAtomicStore, KindAtomicRMW:
		// An atomic access is an access under its own lock, as RAPID
		// models volatile accesses.
		if err := w.line(e.G, "acq", 'L', id, e.Site); err != nil {
			return err
		}
		if e.Kind != KindAtomicStore {
			if err := w.line(e.G, "r", 'V', id, e.Site); err != nil {
				return err
			}
		}
		if e.Kind != KindAtomicLoad {
			if err := w.line(e.G, "w", 'V', id, e.Site); err != nil {
				return err
			}
		}
		return w.line(e.G, "rel", 'L', id, e.Site)
	case KindClose, KindRecv:
		if o := w.objs[e.Obj]; w.isJoin(o) {
			if e.Kind == KindClose {
				return nil
			}
			if c, err := strconv.ParseUint(o.Name[len(stdJoinPrefix)+1:], 10, 32); err == nil && o.Name[len(stdJoinPrefix)] == 'T' {
				return w.line(e.G, "join", 'T', c, e.Site)
			}
		}
	case KindInvalid:
		return fmt.Errorf("cannot write event %d of invalid kind", e.Seq)
	}
	if e.Kind >= numKinds {
		return fmt.Errorf("cannot write event %d of invalid kind %d", e.Seq, e.Kind)
	}
	// Read-locks, and channel, WaitGroup, Cond and Once operations,
	// become an empty critical section of a lock per object: it orders
	// each operation after the earlier ones on the object, which keeps
	// every happens-before edge they make (and adds some), while readers
	// still do not exclude each other.
	if err := w.line(e.G, "acq", 'L', id, e.Site); err != nil {
		return err
	}
	return w.line(e.G, "rel", 'L', id, e.Site)
}

// Flush writes out the buffered trace and table.
func (w *STDWriter) Flush() error {
	if w.table != nil {
		if err := w.table.Flush(); err != nil {
			return err
		}
	}
	return w.w.Flush()
}
