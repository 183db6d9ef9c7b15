package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/avcheck/avcheck/internal/intent"
)

// textMagic starts the header line of the text format; the version
// follows it.
const textMagic = "avtrace"

// TextVersion is the version of the text format this package writes and
// the newest it reads.
const TextVersion = 1

// maxLine bounds a text line, so that a file without newlines cannot make
// a reader hold all of it.
const maxLine = 1 << 20

// maxSiteID bounds site ids, because Trace.Sites is indexed by them.
const maxSiteID = 1 << 20

// TextReader reads the text trace format (see docs/trace-formats.md). It
// holds the declarations, not the events.
type TextReader struct {
	name   string
	br     *bufio.Reader
	line   int
	long   []byte // a line longer than br's buffer, assembled
	header bool
	err    error // sticky: the first error is the only one
	seq    uint64

	declarations
	siteKnown []bool
	siteByPos map[string]SiteID

	objByName    map[string]ObjID
	ambiguous    map[string]bool
	nextImplicit ObjID

	// Message numbers for sends and receives that leave them implicit.
	sent, received map[ObjID]uint64
	onceRan        map[ObjID]bool
}

// NewTextReader returns a reader of the text format from r; name is the
// file name its errors give.
func NewTextReader(r io.Reader, name string) *TextReader {
	return &TextReader{
		name:         name,
		br:           bufio.NewReaderSize(r, 1<<16),
		declarations: newDeclarations(),
		siteKnown:    []bool{true},
		objByName:    make(map[string]ObjID),
		nextImplicit: 1,
	}
}

func (r *TextReader) errorf(format string, args ...any) error {
	r.err = &FormatError{File: r.name, Line: r.line, Msg: fmt.Sprintf(format, args...)}
	return r.err
}

// readLine returns the next line without its newline, valid until the
// next call.
func (r *TextReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
			if len(r.long) > maxLine {
				r.line++
				return nil, r.errorf("line longer than %d bytes", maxLine)
			}
		}
		line = r.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	r.line++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}

// Next returns the next event, or io.EOF after the last one.
func (r *TextReader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && !r.header {
				r.line = max(r.line, 1)
				return Event{}, r.errorf("empty trace: want the header %q", "avtrace 1")
			}
			if !errors.Is(err, io.EOF) && r.err == nil {
				r.err = err
			}
			return Event{}, err
		}
		var tl tokens
		tl.s = line
		first, err := tl.next()
		if err != nil {
			return Event{}, r.errorf("%v", err)
		}
		if first == nil {
			continue // blank or comment
		}
		if !r.header {
			if err := r.parseHeader(first, &tl); err != nil {
				return Event{}, err
			}
			continue
		}
		switch {
		case first[0] == 'g' && len(first) > 1 && isDigit(first[1]):
			return r.parseEvent(first, &tl)
		case string(first) == "site":
			if err := r.parseSite(&tl); err != nil {
				return Event{}, err
			}
		case string(first) == "obj":
			if err := r.parseObj(&tl); err != nil {
				return Event{}, err
			}
		case string(first) == textMagic:
			return Event{}, r.errorf("repeated header")
		default:
			return Event{}, r.errorf("expected an event (g<N> <kind> ...), a site or an obj line, found %q", first)
		}
	}
}

func (r *TextReader) parseHeader(first []byte, tl *tokens) error {
	if string(first) != textMagic {
		return r.errorf("missing header: want %q as the first line, found %q", "avtrace 1", first)
	}
	v, err := tl.next()
	if err != nil || v == nil {
		return r.errorf("header needs a version: want %q", "avtrace 1")
	}
	n, ok := parseUint(v)
	if !ok {
		return r.errorf("bad version %q in header", v)
	}
	if n != TextVersion {
		return r.errorf("unsupported text trace version %d (this avcheck reads version %d)", n, TextVersion)
	}
	if err := r.noMore(tl); err != nil {
		return err
	}
	r.header = true
	return nil
}

func (r *TextReader) noMore(tl *tokens) error {
	tok, err := tl.next()
	if err != nil {
		return r.errorf("%v", err)
	}
	if tok != nil {
		return r.errorf("unexpected %q at end of line", tok)
	}
	return nil
}

// parseSite parses "site ID FILE:LINE[:COL] [FUNC]".
func (r *TextReader) parseSite(tl *tokens) error {
	tok, err := tl.next()
	if err != nil {
		return r.errorf("%v", err)
	}
	id, ok := parseUint(tok)
	if !ok || id == 0 || id >= maxSiteID {
		return r.errorf("site needs an id from 1 to %d, found %q", maxSiteID-1, tok)
	}
	pos, err := tl.nextString()
	if err != nil {
		return r.errorf("%v", err)
	}
	s, ok := parsePos(pos)
	if !ok {
		return r.errorf("site %d needs a position FILE:LINE[:COL], found %q", id, pos)
	}
	if s.Func, err = tl.nextString(); err != nil {
		return r.errorf("%v", err)
	}
	if err := r.noMore(tl); err != nil {
		return err
	}
	if int(id) < len(r.siteKnown) && r.siteKnown[id] {
		return r.errorf("site %d declared twice", id)
	}
	r.setSite(SiteID(id), s)
	return nil
}

func (r *TextReader) setSite(id SiteID, s Site) {
	for int(id) >= len(r.sites) {
		r.sites = append(r.sites, Site{})
		r.siteKnown = append(r.siteKnown, false)
	}
	r.sites[id] = s
	r.siteKnown[id] = true
}

// parsePos parses FILE:LINE[:COL]; the file may itself contain colons.
func parsePos(s string) (Site, bool) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Site{}, false
	}
	last, err := strconv.Atoi(s[i+1:])
	if err != nil || last < 0 {
		return Site{}, false
	}
	if j := strings.LastIndexByte(s[:i], ':'); j >= 0 {
		if line, err := strconv.Atoi(s[j+1 : i]); err == nil && line >= 0 {
			return Site{File: s[:j], Line: line, Col: last}, true
		}
	}
	return Site{File: s[:i], Line: last}, true
}

// parseObj parses "obj ID KIND [NAME] [cap=N]".
func (r *TextReader) parseObj(tl *tokens) error {
	tok, err := tl.next()
	if err != nil {
		return r.errorf("%v", err)
	}
	n, ok := parseUint(tok)
	if !ok {
		return r.errorf("obj needs a numeric id such as 0x10, found %q", tok)
	}
	id := ObjID(n)
	kt, err := tl.next()
	if err != nil {
		return r.errorf("%v", err)
	}
	kind, ok := ParseObjKind(string(kt))
	if !ok {
		return r.errorf("unknown object kind %q (want var, mutex, rwmutex, chan, waitgroup, cond, once or unknown)", kt)
	}
	o := Object{Kind: kind}
	for {
		tok, err := tl.next()
		if err != nil {
			return r.errorf("%v", err)
		}
		if tok == nil {
			break
		}
		if bytes.HasPrefix(tok, []byte("cap=")) {
			c, ok := parseUint(tok[4:])
			if !ok || c > 1<<31 {
				return r.errorf("bad channel capacity %q", tok)
			}
			o.Cap = int(c)
			continue
		}
		if o.Name != "" {
			return r.errorf("unexpected %q after the object's name", tok)
		}
		if o.Name, err = unquoteToken(tok); err != nil {
			return r.errorf("%v", err)
		}
	}
	if old, ok := r.objs[id]; ok {
		return r.errorf("object %#x declared twice (first as %s %q)", uint64(id), old.Kind, old.Name)
	}
	r.objs[id] = o
	r.addName(o.Name, id)
	return nil
}

func (r *TextReader) addName(name string, id ObjID) {
	if name == "" {
		return
	}
	if old, ok := r.objByName[name]; ok && old != id {
		if r.ambiguous == nil {
			r.ambiguous = make(map[string]bool)
		}
		r.ambiguous[name] = true
		return
	}
	r.objByName[name] = id
}

// parseEvent parses "gN KIND [OPERAND] [@SITE] [KEY=VALUE]...".
func (r *TextReader) parseEvent(first []byte, tl *tokens) (Event, error) {
	var e Event
	g, ok := parseUint(first[1:])
	if !ok || g > 1<<32-1 {
		return e, r.errorf("bad goroutine %q: want g<N>", first)
	}
	e.G = GoID(g)
	kt, err := tl.next()
	if err != nil {
		return e, r.errorf("%v", err)
	}
	if kt == nil {
		return e, r.errorf("event needs a kind after %s", first)
	}
	e.Kind = kindOf(kt)
	if e.Kind == KindInvalid {
		return e, r.errorf("unknown event kind %q", kt)
	}
	switch e.Kind {
	case KindEnd, KindRegionBegin, KindRegionEnd:
	case KindFork:
		tok, err := tl.next()
		if err != nil {
			return e, r.errorf("%v", err)
		}
		if len(tok) < 2 || tok[0] != 'g' {
			return e, r.errorf("fork needs the child goroutine as g<N>, found %q", tok)
		}
		c, ok := parseUint(tok[1:])
		if !ok || c > 1<<32-1 {
			return e, r.errorf("fork needs the child goroutine as g<N>, found %q", tok)
		}
		e.Arg = c
	default:
		tok, err := tl.next()
		if err != nil {
			return e, r.errorf("%v", err)
		}
		if tok == nil || tok[0] == '@' || bytes.IndexByte(tok, '=') >= 0 && tok[0] != '"' {
			return e, r.errorf("%s needs an object: a number such as 0x10 or a name", e.Kind)
		}
		if e.Obj, err = r.resolveObj(tok, e.Kind); err != nil {
			return e, err
		}
	}
	e.Seq = r.seq
	var haveArg, haveRange bool
	var rng Range
	for {
		tok, err := tl.next()
		if err != nil {
			return e, r.errorf("%v", err)
		}
		if tok == nil {
			break
		}
		if tok[0] == '@' {
			if e.Site, err = r.resolveSite(tok[1:]); err != nil {
				return e, err
			}
			continue
		}
		eq := bytes.IndexByte(tok, '=')
		if eq <= 0 {
			return e, r.errorf("unexpected %q: want @SITE or KEY=VALUE", tok)
		}
		key, val := tok[:eq], tok[eq+1:]
		bad := func() (Event, error) {
			return e, r.errorf("bad value in %q", tok)
		}
		switch string(key) {
		case "region":
			reg, inst := val, []byte(nil)
			if dot := bytes.IndexByte(val, '.'); dot >= 0 {
				reg, inst = val[:dot], val[dot+1:]
			}
			n, ok := parseUint(reg)
			if !ok || n > 1<<32-1 {
				return bad()
			}
			e.Region = RegionID(n)
			if inst != nil {
				if e.Inst, ok = parseUint(inst); !ok {
					return bad()
				}
			}
		case "br":
			n, ok := parseUint(val)
			if !ok || n > 1<<32-1 {
				return bad()
			}
			e.Branches = uint32(n)
		case "v":
			if e.Value, ok = parseInt(val); !ok {
				return bad()
			}
			e.Flags |= HasValue
		case "range":
			if e.Kind != KindRead {
				return e, r.errorf("range= applies only to rd, not %s", e.Kind)
			}
			lo, hi, ok := bytes.Cut(val, []byte(".."))
			if !ok {
				return e, r.errorf("bad value in %q: want range=LO..HI, either bound may be empty", tok)
			}
			rng = Range{Lo: math.MinInt64, Hi: math.MaxInt64}
			if len(lo) > 0 {
				n, ok := parseInt(lo)
				if !ok {
					return bad()
				}
				rng.Lo = int64(n)
			}
			if len(hi) > 0 {
				n, ok := parseInt(hi)
				if !ok {
					return bad()
				}
				rng.Hi = int64(n)
			}
			haveRange = true
		case "flags":
			n, ok := parseUint(val)
			if !ok || n > 0xff {
				return bad()
			}
			e.Flags |= Flags(n)
		case "seq":
			if e.Seq, ok = parseUint(val); !ok {
				return bad()
			}
		case "arg":
			if e.Arg, ok = parseInt(val); !ok {
				return bad()
			}
			haveArg = true
		case "intent":
			if e.Kind != KindRegionBegin {
				return e, r.errorf("intent= applies only to begin, not %s", e.Kind)
			}
			name, sites, _ := bytes.Cut(val, []byte(","))
			ev, ok := intent.Parse(string(name))
			if !ok {
				return e, r.errorf("bad value in %q: want intent=KIND[,FROMSITE,TOSITE], KIND one of none, annotation, critical-section, write-back, branch, read-pair, read-back", tok)
			}
			var from, to uint64
			if sites != nil {
				f, t, ok := bytes.Cut(sites, []byte(","))
				if !ok {
					return bad()
				}
				var okf, okt bool
				from, okf = parseUint(f)
				to, okt = parseUint(t)
				if !okf || !okt || from >= maxSiteID || to >= maxSiteID {
					return bad()
				}
			}
			e.SetIntent(ev, SiteID(from), SiteID(to))
			haveArg = true
		case "msg":
			if e.Kind != KindSend && e.Kind != KindRecv {
				return e, r.errorf("msg= applies only to send and recv, not %s", e.Kind)
			}
			if e.Arg, ok = parseUint(val); !ok {
				return bad()
			}
			haveArg = true
		case "delta":
			if e.Kind != KindWGAdd {
				return e, r.errorf("delta= applies only to wgadd, not %s", e.Kind)
			}
			if e.Arg, ok = parseInt(val); !ok {
				return bad()
			}
			haveArg = true
		case "ran":
			if e.Kind != KindOnceDo {
				return e, r.errorf("ran= applies only to once, not %s", e.Kind)
			}
			if e.Arg, ok = parseUint(val); !ok || e.Arg > 1 {
				return bad()
			}
			haveArg = true
		default:
			return e, r.errorf("unknown attribute %q (want region, br, v, range, seq, arg, msg, delta, ran or flags)", key)
		}
	}
	if haveRange && !e.SetRange(rng) {
		return e, r.errorf("range=%d..%d needs v= within it", rng.Lo, rng.Hi)
	}
	r.inferArg(&e, haveArg)
	r.seq = e.Seq + 1
	return e, nil
}

// inferArg fills in the arguments a hand-written trace may leave out:
// message numbers in FIFO order, Add(1), and "the first Do runs f".
func (r *TextReader) inferArg(e *Event, explicit bool) {
	switch e.Kind {
	case KindSend:
		if r.sent == nil {
			r.sent, r.received = make(map[ObjID]uint64), make(map[ObjID]uint64)
		}
		if !explicit {
			e.Arg = r.sent[e.Obj] + 1
		}
		r.sent[e.Obj] = max(r.sent[e.Obj], e.Arg)
	case KindRecv:
		if r.sent == nil {
			r.sent, r.received = make(map[ObjID]uint64), make(map[ObjID]uint64)
		}
		if !explicit {
			if r.received[e.Obj] < r.sent[e.Obj] {
				e.Arg = r.received[e.Obj] + 1
			} // else 0: the receive returned because the channel was closed
		}
		r.received[e.Obj] = max(r.received[e.Obj], e.Arg)
	case KindWGAdd:
		if !explicit {
			e.Arg = 1
		}
	case KindOnceDo:
		if r.onceRan == nil {
			r.onceRan = make(map[ObjID]bool)
		}
		if !explicit && !r.onceRan[e.Obj] {
			e.Arg = 1
		}
		if e.Arg == 1 {
			r.onceRan[e.Obj] = true
		}
	}
}

// resolveObj turns an operand into an ObjID, declaring a named object on
// its first use.
func (r *TextReader) resolveObj(tok []byte, k Kind) (ObjID, error) {
	if isDigit(tok[0]) {
		n, ok := parseUint(tok)
		if !ok {
			return 0, r.errorf("bad object %q: want a number such as 0x10 or a name", tok)
		}
		return ObjID(n), nil
	}
	if tok[0] == '"' {
		name, err := unquoteToken(tok)
		if err != nil {
			return 0, r.errorf("%v", err)
		}
		tok = []byte(name)
	}
	if id, ok := r.objByName[string(tok)]; ok {
		if r.ambiguous[string(tok)] {
			return 0, r.errorf("object name %q names more than one object; use its id", tok)
		}
		// A mutex that is read-locked too is an RWMutex.
		if o := r.objs[id]; o.Kind == ObjMutex && (k == KindRAcquire || k == KindRRelease) {
			o.Kind = ObjRWMutex
			r.objs[id] = o
		}
		return id, nil
	}
	for {
		if _, taken := r.objs[r.nextImplicit]; !taken {
			break
		}
		r.nextImplicit++
	}
	id := r.nextImplicit
	r.nextImplicit++
	name := string(tok)
	r.objs[id] = Object{Kind: objKindFor(k), Name: name}
	r.objByName[name] = id
	return id, nil
}

// resolveSite turns "3" or "file.go:12[:3]" into a SiteID, declaring a
// position on its first use.
func (r *TextReader) resolveSite(tok []byte) (SiteID, error) {
	if len(tok) > 0 && isDigit(tok[0]) {
		// Only declarations are bounded by maxSiteID: an STD location
		// may be any 32-bit number.
		if n, ok := parseUint(tok); ok && n <= 1<<32-1 {
			return SiteID(n), nil
		}
	}
	if id, ok := r.siteByPos[string(tok)]; ok {
		return id, nil
	}
	s, ok := parsePos(string(tok))
	if !ok {
		return 0, r.errorf("bad site %q: want a site id or FILE:LINE[:COL]", tok)
	}
	id := SiteID(len(r.sites))
	if id >= maxSiteID {
		return 0, r.errorf("too many sites")
	}
	if r.siteByPos == nil {
		r.siteByPos = make(map[string]SiteID)
	}
	r.siteByPos[string(tok)] = id
	r.setSite(id, s)
	return id, nil
}

// kindOf is ParseKind for a byte slice, without allocating.
func kindOf(b []byte) Kind {
	switch string(b) {
	case "rd":
		return KindRead
	case "wr":
		return KindWrite
	case "acq":
		return KindAcquire
	case "rel":
		return KindRelease
	}
	k, _ := ParseKind(string(b))
	return k
}

// tokens splits a line into whitespace-separated tokens; a token starting
// with a double quote runs to its closing quote (Go syntax), and a token
// starting with # begins a comment.
type tokens struct {
	s []byte
	i int
}

func (t *tokens) next() ([]byte, error) {
	for t.i < len(t.s) && (t.s[t.i] == ' ' || t.s[t.i] == '\t') {
		t.i++
	}
	if t.i >= len(t.s) || t.s[t.i] == '#' {
		t.i = len(t.s)
		return nil, nil
	}
	start := t.i
	if t.s[t.i] == '"' {
		t.i++
		for t.i < len(t.s) && t.s[t.i] != '"' {
			if t.s[t.i] == '\\' {
				t.i++
			}
			t.i++
		}
		if t.i >= len(t.s) {
			return nil, errors.New("unterminated quoted string")
		}
		t.i++
		if t.i < len(t.s) && t.s[t.i] != ' ' && t.s[t.i] != '\t' {
			return nil, errors.New("quoted string must be followed by a space")
		}
		return t.s[start:t.i], nil
	}
	for t.i < len(t.s) && t.s[t.i] != ' ' && t.s[t.i] != '\t' {
		t.i++
	}
	return t.s[start:t.i], nil
}

// nextString returns the next token as a string, unquoted; "" at the end.
func (t *tokens) nextString() (string, error) {
	tok, err := t.next()
	if err != nil || tok == nil {
		return "", err
	}
	return unquoteToken(tok)
}

func unquoteToken(tok []byte) (string, error) {
	if len(tok) > 0 && tok[0] == '"' {
		s, err := strconv.Unquote(string(tok))
		if err != nil {
			return "", fmt.Errorf("bad quoted string %s", tok)
		}
		return s, nil
	}
	return string(tok), nil
}

// needsQuote reports whether a name must be quoted to read back as one
// token that is not mistaken for an attribute, a site or a number.
func needsQuote(s string) bool {
	if s == "" || isDigit(s[0]) || s[0] == '@' || s[0] == '"' || s[0] == '#' {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '"' || c == '=' || c == '\\' || c >= 0x7f {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseUint parses a decimal or 0x-prefixed hexadecimal number.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
		if len(b) > 16 {
			return 0, false
		}
		for _, c := range b {
			var d byte
			switch {
			case '0' <= c && c <= '9':
				d = c - '0'
			case 'a' <= c && c <= 'f':
				d = c - 'a' + 10
			case 'A' <= c && c <= 'F':
				d = c - 'A' + 10
			default:
				return 0, false
			}
			n = n<<4 | uint64(d)
		}
		return n, true
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseInt parses an unsigned number, or a negative decimal one as its
// two's complement.
func parseInt(b []byte) (uint64, bool) {
	if len(b) > 1 && b[0] == '-' {
		n, ok := parseUint(b[1:])
		if !ok || n > 1<<63 {
			return 0, false
		}
		return -n, true
	}
	return parseUint(b)
}

// TextWriter writes the text trace format.
type TextWriter struct {
	w       *bufio.Writer
	buf     []byte
	started bool
	seq     uint64 // the Seq a reader will assume for the next event
}

// NewTextWriter returns a writer of the text format to w.
func NewTextWriter(w io.Writer) *TextWriter {
	return &TextWriter{w: bufio.NewWriterSize(w, 1<<16)}
}

func (w *TextWriter) start() {
	if !w.started {
		w.started = true
		w.buf = append(w.buf[:0], textMagic+" "...)
		w.buf = strconv.AppendInt(w.buf, TextVersion, 10)
		w.buf = append(w.buf, '\n')
	}
}

func (w *TextWriter) emit() error {
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// DeclareSite writes a site line.
func (w *TextWriter) DeclareSite(id SiteID, s Site) error {
	if id == 0 || id >= maxSiteID {
		return fmt.Errorf("site id %d out of range 1..%d", id, maxSiteID-1)
	}
	w.start()
	w.buf = append(w.buf, "site "...)
	w.buf = strconv.AppendUint(w.buf, uint64(id), 10)
	w.buf = append(w.buf, ' ')
	w.buf = appendName(w.buf, s.File+":"+strconv.Itoa(s.Line)+":"+strconv.Itoa(s.Col))
	if s.Func != "" {
		w.buf = append(w.buf, ' ')
		w.buf = appendName(w.buf, s.Func)
	}
	w.buf = append(w.buf, '\n')
	return w.emit()
}

// DeclareObject writes an obj line.
func (w *TextWriter) DeclareObject(id ObjID, o Object) error {
	w.start()
	w.buf = append(w.buf, "obj 0x"...)
	w.buf = strconv.AppendUint(w.buf, uint64(id), 16)
	w.buf = append(w.buf, ' ')
	w.buf = append(w.buf, o.Kind.String()...)
	if o.Name != "" {
		w.buf = append(w.buf, ' ')
		w.buf = appendName(w.buf, o.Name)
	}
	if o.Cap != 0 {
		w.buf = append(w.buf, " cap="...)
		w.buf = strconv.AppendInt(w.buf, int64(o.Cap), 10)
	}
	w.buf = append(w.buf, '\n')
	return w.emit()
}

func appendName(b []byte, s string) []byte {
	if needsQuote(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// Write writes one event line.
func (w *TextWriter) Write(e Event) error {
	if e.Kind == KindInvalid || e.Kind >= numKinds {
		return fmt.Errorf("cannot write event %d of invalid kind %d", e.Seq, e.Kind)
	}
	w.start()
	w.buf = AppendEvent(w.buf, e, nil)
	if e.Seq != w.seq {
		w.buf = append(w.buf, " seq="...)
		w.buf = strconv.AppendUint(w.buf, e.Seq, 10)
	}
	w.seq = e.Seq + 1
	w.buf = append(w.buf, '\n')
	return w.emit()
}

// Flush writes out buffered lines (and the header of an empty trace).
func (w *TextWriter) Flush() error {
	w.start()
	if err := w.emit(); err != nil {
		return err
	}
	return w.w.Flush()
}

// AppendEvent appends e in the text format, without Seq or newline. If
// names is not nil, objects are given by name where they have a simple
// one, for messages meant for people; otherwise by id, as the text
// format writes them.
func AppendEvent(b []byte, e Event, names interface{ Object(ObjID) Object }) []byte {
	b = append(b, 'g')
	b = strconv.AppendUint(b, uint64(e.G), 10)
	b = append(b, ' ')
	b = append(b, e.Kind.String()...)
	switch {
	case e.Kind == KindFork:
		b = append(b, " g"...)
		b = strconv.AppendUint(b, e.Arg, 10)
	case usesObj(e.Kind):
		b = append(b, ' ')
		b = appendObj(b, e.Obj, names)
	}
	if e.Site != 0 {
		b = append(b, " @"...)
		b = strconv.AppendUint(b, uint64(e.Site), 10)
	}
	if e.Region != 0 || e.Inst != 0 {
		b = append(b, " region="...)
		b = strconv.AppendUint(b, uint64(e.Region), 10)
		if e.Inst != 0 {
			b = append(b, '.')
			b = strconv.AppendUint(b, e.Inst, 10)
		}
	}
	if e.Branches != 0 {
		b = append(b, " br="...)
		b = strconv.AppendUint(b, uint64(e.Branches), 10)
	}
	if e.Flags&HasValue != 0 {
		b = append(b, " v="...)
		b = strconv.AppendUint(b, e.Value, 10)
	}
	rng, hasRange := e.Range()
	if hasRange {
		b = append(b, " range="...)
		if rng.Lo != math.MinInt64 {
			b = strconv.AppendInt(b, rng.Lo, 10)
		}
		b = append(b, ".."...)
		if rng.Hi != math.MaxInt64 {
			b = strconv.AppendInt(b, rng.Hi, 10)
		}
	}
	f := e.Flags &^ HasValue
	if hasRange {
		f &^= HasRange
	}
	if f != 0 {
		b = append(b, " flags="...)
		b = strconv.AppendUint(b, uint64(f), 10)
	}
	if !hasRange {
		b = appendArg(b, e)
	}
	return b
}

// appendArg appends the attribute that carries e's Arg.
func appendArg(b []byte, e Event) []byte {
	switch e.Kind {
	case KindFork:
	case KindSend, KindRecv:
		b = append(b, " msg="...)
		b = strconv.AppendUint(b, e.Arg, 10)
	case KindWGAdd:
		b = append(b, " delta="...)
		b = strconv.AppendInt(b, int64(e.Arg), 10)
	case KindRegionBegin:
		ev, from, to := e.Intent()
		var back Event
		back.SetIntent(ev, from, to)
		switch {
		case e.Arg == 0:
		case back.Arg != e.Arg || !ev.Valid():
			b = append(b, " arg="...)
			b = strconv.AppendUint(b, e.Arg, 10)
		default:
			b = append(b, " intent="...)
			b = append(b, ev.String()...)
			if from != 0 || to != 0 {
				b = append(b, ',')
				b = strconv.AppendUint(b, uint64(from), 10)
				b = append(b, ',')
				b = strconv.AppendUint(b, uint64(to), 10)
			}
		}
	case KindOnceDo:
		if e.Arg <= 1 {
			b = append(b, " ran="...)
		} else {
			b = append(b, " arg="...)
		}
		b = strconv.AppendUint(b, e.Arg, 10)
	default:
		if e.Arg != 0 {
			b = append(b, " arg="...)
			b = strconv.AppendUint(b, e.Arg, 10)
		}
	}
	return b
}

func appendObj(b []byte, id ObjID, names interface{ Object(ObjID) Object }) []byte {
	if names != nil {
		if n := names.Object(id).Name; n != "" && !needsQuote(n) {
			return append(b, n...)
		}
	}
	b = append(b, "0x"...)
	return strconv.AppendUint(b, uint64(id), 16)
}

// String returns the event in the text format, without its Seq.
func (e Event) String() string { return string(AppendEvent(nil, e, nil)) }
