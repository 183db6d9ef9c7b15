package trace

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// binaryMagic starts a native trace. Like PNG's signature, the high first
// byte and the newline catch files mangled by text-mode transfers; the
// version, a uvarint, follows it.
const binaryMagic = "\x89avt\n"

// BinaryVersion is the version of the native format this package writes
// and the newest it reads.
const BinaryVersion = 1

// Record tags of the native format. An event record's first byte is its
// Kind (below tagFlags), so that tags are distinguishable from events by
// the high bit alone.
const (
	tagSite   = 0x80
	tagObject = 0x81
	tagFlags  = 0x40 // or'ed into an event's kind: a full Flags byte follows
)

// Presence bits of an event record's second byte: which fields differ
// from what the reader predicts (the previous event's goroutine, object,
// site, region and instance; Seq one more than the previous; zero for
// Arg, Value and Branches).
const (
	hasG = 1 << iota
	hasObj
	hasArg
	hasValue
	hasSite
	hasRegion
	hasBranches
	hasSeq
)

// maxEventBytes bounds an encoded event: two header bytes, a flags byte
// and nine varints of at most ten bytes.
const maxEventBytes = 3 + 9*binary.MaxVarintLen64

// maxString bounds a name or file in a declaration.
const maxString = 1 << 16

// BinaryReader reads the native binary trace format. It decodes from its
// own buffer, not through bufio, because that is what makes it fast.
type BinaryReader struct {
	r      io.Reader
	name   string
	buf    []byte
	pos    int
	base   int64 // file offset of buf[0]
	eof    bool
	rerr   error // a read error other than io.EOF
	err    error // sticky
	header bool

	seq    uint64 // the predicted Seq of the next event
	g      GoID
	obj    ObjID
	site   SiteID
	region RegionID
	inst   uint64
	declarations
}

// NewBinaryReader returns a reader of the native format from r; name is
// the file name its errors give.
func NewBinaryReader(r io.Reader, name string) *BinaryReader {
	return &BinaryReader{
		r:            r,
		name:         name,
		buf:          make([]byte, 0, 256<<10),
		declarations: newDeclarations(),
	}
}

func (r *BinaryReader) errorf(off int64, format string, args ...any) error {
	r.err = &FormatError{File: r.name, Offset: off, Msg: fmt.Sprintf(format, args...)}
	return r.err
}

// fill makes at least n bytes available from pos, unless the input ends
// first.
func (r *BinaryReader) fill(n int) {
	if len(r.buf)-r.pos >= n || r.eof {
		return
	}
	if r.pos > 0 {
		m := copy(r.buf, r.buf[r.pos:])
		r.base += int64(r.pos)
		r.buf = r.buf[:m]
		r.pos = 0
	}
	if n > cap(r.buf) {
		r.buf = slices.Grow(r.buf, n-len(r.buf))
	}
	for empty := 0; len(r.buf) < n && !r.eof; {
		m, err := r.r.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+m]
		switch {
		case err == io.EOF:
			r.eof = true
		case err != nil:
			r.eof, r.rerr = true, err
		case m == 0:
			// A reader that returns nothing forever must not hang us;
			// bufio gives up the same way.
			if empty++; empty >= 100 {
				r.eof, r.rerr = true, io.ErrNoProgress
			}
		}
	}
}

func (r *BinaryReader) readHeader() error {
	r.fill(len(binaryMagic) + binary.MaxVarintLen64)
	b := r.buf[r.pos:]
	if len(b) < len(binaryMagic) || string(b[:len(binaryMagic)]) != binaryMagic {
		return r.errorf(0, "not a native avcheck trace (bad magic)")
	}
	v, n := binary.Uvarint(b[len(binaryMagic):])
	if n <= 0 {
		return r.errorf(int64(len(binaryMagic)), "truncated varint")
	}
	if v != BinaryVersion {
		return r.errorf(int64(len(binaryMagic)), "unsupported native trace version %d (this avcheck reads version %d)", v, BinaryVersion)
	}
	r.pos += len(binaryMagic) + n
	r.header = true
	return nil
}

// Next returns the next event, or io.EOF after the last one.
func (r *BinaryReader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	if !r.header {
		if err := r.readHeader(); err != nil {
			return Event{}, err
		}
	}
	for {
		if len(r.buf)-r.pos < maxEventBytes {
			r.fill(maxEventBytes)
		}
		if r.pos >= len(r.buf) {
			if r.rerr != nil {
				r.err = r.rerr
				return Event{}, r.err
			}
			return Event{}, io.EOF
		}
		tag := r.buf[r.pos]
		if tag < tagSite {
			return r.decodeEvent()
		}
		if err := r.decodeDecl(tag); err != nil {
			return Event{}, err
		}
	}
}

// decodeEvent decodes the event at pos; at least maxEventBytes are
// buffered unless the input ends sooner. It is written out field by
// field, without a closure, because this loop is the reader's speed.
//
// Each field's varint is decoded with its one-byte case written out in
// place. The repetition is deliberate: a helper holding the fast path and
// the call to slowUvarint exceeds the inliner's budget (cost 101 of 80),
// and calling it costs about a third of the decoding speed (measured with
// go test ./dynamic/trace -bench Parse/native: 23M against 16M events/s).
func (r *BinaryReader) decodeEvent() (Event, error) {
	b := r.buf
	start := r.pos
	i := start
	var e Event
	k := b[i]
	i++
	e.Kind = Kind(k &^ tagFlags)
	if e.Kind == KindInvalid || e.Kind >= numKinds {
		return e, r.errorf(r.base+int64(start), "unknown event kind %d", e.Kind)
	}
	if i >= len(b) {
		return e, r.errorf(r.base+int64(start), "truncated event")
	}
	mask := b[i]
	i++
	if k&tagFlags != 0 {
		if i >= len(b) {
			return e, r.errorf(r.base+int64(start), "truncated event")
		}
		e.Flags = Flags(b[i])
		i++
	}
	var v uint64
	at := i
	e.Seq = r.seq
	if mask&hasSeq != 0 {
		if at < len(b) && b[at] < 0x80 {
			v = uint64(b[at])
			at++
		} else {
			if v, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		e.Seq += unzigzag(v)
	}
	e.G = r.g
	if mask&hasG != 0 {
		if at < len(b) && b[at] < 0x80 {
			v = uint64(b[at])
			at++
		} else {
			if v, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		if v > 1<<32-1 {
			return Event{}, r.errorf(r.base+int64(start), "goroutine id %d out of range", v)
		}
		e.G = GoID(v)
	}
	e.Obj = r.obj
	if mask&hasObj != 0 {
		if at < len(b) && b[at] < 0x80 {
			v = uint64(b[at])
			at++
		} else {
			if v, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		e.Obj += ObjID(unzigzag(v))
	}
	if mask&hasArg != 0 {
		if at < len(b) && b[at] < 0x80 {
			e.Arg = uint64(b[at])
			at++
		} else {
			if e.Arg, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
	}
	if mask&hasValue != 0 {
		if at < len(b) && b[at] < 0x80 {
			e.Value = uint64(b[at])
			at++
		} else {
			if e.Value, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		e.Flags |= HasValue
	}
	e.Site = r.site
	if mask&hasSite != 0 {
		if at < len(b) && b[at] < 0x80 {
			v = uint64(b[at])
			at++
		} else {
			if v, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		e.Site += SiteID(unzigzag(v))
	}
	if mask&hasRegion != 0 {
		if at < len(b) && b[at] < 0x80 {
			v = uint64(b[at])
			at++
		} else {
			if v, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		if v > 1<<32-1 {
			return Event{}, r.errorf(r.base+int64(start), "region id %d out of range", v)
		}
		e.Region = RegionID(v)
		if at < len(b) && b[at] < 0x80 {
			v = uint64(b[at])
			at++
		} else {
			if v, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		e.Inst = r.inst + unzigzag(v)
	} else {
		e.Region, e.Inst = r.region, r.inst
	}
	if mask&hasBranches != 0 {
		if at < len(b) && b[at] < 0x80 {
			v = uint64(b[at])
			at++
		} else {
			if v, i = slowUvarint(b, at); i < 0 {
				return e, r.varintError(at, i)
			}
			at = i
		}
		if v > 1<<32-1 {
			return Event{}, r.errorf(r.base+int64(start), "branch count %d out of range", v)
		}
		e.Branches = uint32(v)
	}
	if e.Kind == KindFork && e.Arg > 1<<32-1 {
		return Event{}, r.errorf(r.base+int64(start), "fork of goroutine %d, which is out of range", e.Arg)
	}
	if !usesObj(e.Kind) {
		// Only events that name objects move the object predictor, so
		// that a fork between two accesses does not cost a delta.
		if e.Obj != r.obj {
			return Event{}, r.errorf(r.base+int64(start), "%s event carries an object", e.Kind)
		}
		e.Obj = 0
	}
	r.pos = at
	r.seq = e.Seq + 1
	r.g = e.G
	if usesObj(e.Kind) {
		r.obj = e.Obj
	}
	r.site = e.Site
	r.region, r.inst = e.Region, e.Inst
	return e, nil
}

// The negative indexes slowUvarint returns for malformed varints.
const (
	errTruncated = -1
	errOverflow  = -2
)

// slowUvarint decodes the uvarint at b[i:], returning the index after
// it, or errTruncated or errOverflow. decodeEvent decodes one-byte
// values, the most common, inline before calling it.
func slowUvarint(b []byte, i int) (uint64, int) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if i >= len(b) {
			return 0, errTruncated
		}
		c := b[i]
		i++
		if c < 0x80 {
			if shift == 63 && c > 1 {
				return 0, errOverflow
			}
			return v | uint64(c)<<shift, i
		}
		v |= uint64(c&0x7f) << shift
	}
	return 0, errOverflow
}

func (r *BinaryReader) varintError(at, code int) error {
	if code == errTruncated {
		return r.errorf(r.base+int64(at), "truncated varint")
	}
	return r.errorf(r.base+int64(at), "varint overflows 64 bits")
}

func unzigzag(v uint64) uint64 { return (v >> 1) ^ -(v & 1) }
func zigzag(d uint64) uint64   { return (d << 1) ^ uint64(int64(d)>>63) }

// decodeDecl decodes a site or object declaration at pos.
func (r *BinaryReader) decodeDecl(tag byte) error {
	start := r.base + int64(r.pos)
	r.pos++
	uv := func() (uint64, error) {
		r.fill(binary.MaxVarintLen64)
		v, n := binary.Uvarint(r.buf[r.pos:])
		if n == 0 {
			return 0, r.errorf(r.base+int64(r.pos), "truncated varint")
		}
		if n < 0 {
			return 0, r.errorf(r.base+int64(r.pos), "varint overflows 64 bits")
		}
		r.pos += n
		return v, nil
	}
	str := func() (string, error) {
		n, err := uv()
		if err != nil {
			return "", err
		}
		if n > maxString {
			return "", r.errorf(r.base+int64(r.pos), "string of %d bytes is longer than %d", n, maxString)
		}
		r.fill(int(n))
		if len(r.buf)-r.pos < int(n) {
			return "", r.errorf(r.base+int64(r.pos), "truncated string")
		}
		s := string(r.buf[r.pos : r.pos+int(n)])
		r.pos += int(n)
		return s, nil
	}
	switch tag {
	case tagSite:
		id, err := uv()
		if err != nil {
			return err
		}
		if id == 0 || id >= maxSiteID {
			return r.errorf(start, "site id %d out of range 1..%d", id, maxSiteID-1)
		}
		var s Site
		if s.File, err = str(); err != nil {
			return err
		}
		line, err := uv()
		if err != nil {
			return err
		}
		col, err := uv()
		if err != nil {
			return err
		}
		if line > 1<<31 || col > 1<<31 {
			return r.errorf(start, "site position %d:%d out of range", line, col)
		}
		s.Line, s.Col = int(line), int(col)
		if s.Func, err = str(); err != nil {
			return err
		}
		if int(id) < len(r.sites) && r.sites[id] != (Site{}) {
			return r.errorf(start, "site %d declared twice", id)
		}
		for int(id) >= len(r.sites) {
			r.sites = append(r.sites, Site{})
		}
		r.sites[id] = s
		return nil
	case tagObject:
		id, err := uv()
		if err != nil {
			return err
		}
		k, err := uv()
		if err != nil {
			return err
		}
		if k >= uint64(len(objKindNames)) {
			return r.errorf(start, "unknown object kind %d", k)
		}
		o := Object{Kind: ObjKind(k)}
		if o.Name, err = str(); err != nil {
			return err
		}
		c, err := uv()
		if err != nil {
			return err
		}
		if c > 1<<31 {
			return r.errorf(start, "channel capacity %d out of range", c)
		}
		o.Cap = int(c)
		if _, ok := r.objs[ObjID(id)]; ok {
			return r.errorf(start, "object %#x declared twice", id)
		}
		r.objs[ObjID(id)] = o
		return nil
	}
	return r.errorf(start, "unknown record tag %#x", tag)
}

// BinaryWriter writes the native binary trace format.
type BinaryWriter struct {
	w       *bufio.Writer
	started bool
	seq     uint64
	g       GoID
	obj     ObjID
	site    SiteID
	region  RegionID
	inst    uint64
}

// NewBinaryWriter returns a writer of the native format to w.
func NewBinaryWriter(w io.Writer) *BinaryWriter {
	return &BinaryWriter{w: bufio.NewWriterSize(w, 256<<10)}
}

func (w *BinaryWriter) start() {
	if !w.started {
		w.started = true
		// A bufio.Writer keeps its first error for Flush to return.
		_, _ = w.w.WriteString(binaryMagic)
		_, _ = w.w.Write(binary.AppendUvarint(nil, BinaryVersion))
	}
}

// DeclareSite writes a site record.
func (w *BinaryWriter) DeclareSite(id SiteID, s Site) error {
	if id == 0 || id >= maxSiteID {
		return fmt.Errorf("site id %d out of range 1..%d", id, maxSiteID-1)
	}
	if len(s.File) > maxString || len(s.Func) > maxString || s.Line < 0 || s.Col < 0 {
		return fmt.Errorf("site %d cannot be encoded", id)
	}
	w.start()
	b := w.w.AvailableBuffer()
	b = append(b, tagSite)
	b = binary.AppendUvarint(b, uint64(id))
	b = binary.AppendUvarint(b, uint64(len(s.File)))
	b = append(b, s.File...)
	b = binary.AppendUvarint(b, uint64(s.Line))
	b = binary.AppendUvarint(b, uint64(s.Col))
	b = binary.AppendUvarint(b, uint64(len(s.Func)))
	b = append(b, s.Func...)
	_, err := w.w.Write(b)
	return err
}

// DeclareObject writes an object record.
func (w *BinaryWriter) DeclareObject(id ObjID, o Object) error {
	if len(o.Name) > maxString || o.Cap < 0 {
		return fmt.Errorf("object %#x cannot be encoded", uint64(id))
	}
	w.start()
	b := w.w.AvailableBuffer()
	b = append(b, tagObject)
	b = binary.AppendUvarint(b, uint64(id))
	b = binary.AppendUvarint(b, uint64(o.Kind))
	b = binary.AppendUvarint(b, uint64(len(o.Name)))
	b = append(b, o.Name...)
	b = binary.AppendUvarint(b, uint64(o.Cap))
	_, err := w.w.Write(b)
	return err
}

// Write writes one event record.
func (w *BinaryWriter) Write(e Event) error {
	if e.Kind == KindInvalid || e.Kind >= numKinds {
		return fmt.Errorf("cannot write event %d of invalid kind %d", e.Seq, e.Kind)
	}
	w.start()
	if w.w.Available() < maxEventBytes {
		if err := w.w.Flush(); err != nil {
			return err
		}
	}
	var hdr [3]byte
	hdr[0] = byte(e.Kind)
	n := 2
	if e.Flags&^HasValue != 0 {
		hdr[0] |= tagFlags
		hdr[2] = byte(e.Flags)
		n = 3
	}
	var mask byte
	b := w.w.AvailableBuffer()
	b = append(b, hdr[:n]...)
	if e.Seq != w.seq {
		mask |= hasSeq
		b = binary.AppendUvarint(b, zigzag(e.Seq-w.seq))
	}
	if e.G != w.g {
		mask |= hasG
		b = binary.AppendUvarint(b, uint64(e.G))
	}
	if usesObj(e.Kind) && e.Obj != w.obj {
		mask |= hasObj
		b = binary.AppendUvarint(b, zigzag(uint64(e.Obj-w.obj)))
		w.obj = e.Obj
	}
	if e.Arg != 0 {
		mask |= hasArg
		b = binary.AppendUvarint(b, e.Arg)
	}
	if e.Flags&HasValue != 0 {
		mask |= hasValue
		b = binary.AppendUvarint(b, e.Value)
	}
	if e.Site != w.site {
		mask |= hasSite
		b = binary.AppendUvarint(b, zigzag(uint64(int64(int32(e.Site-w.site)))))
	}
	if e.Region != w.region || e.Inst != w.inst {
		mask |= hasRegion
		b = binary.AppendUvarint(b, uint64(e.Region))
		b = binary.AppendUvarint(b, zigzag(e.Inst-w.inst))
	}
	if e.Branches != 0 {
		mask |= hasBranches
		b = binary.AppendUvarint(b, uint64(e.Branches))
	}
	b[1] = mask
	w.seq = e.Seq + 1
	w.g = e.G
	w.site = e.Site
	w.region, w.inst = e.Region, e.Inst
	_, err := w.w.Write(b)
	return err
}

// Flush writes out buffered records (and the header of an empty trace).
func (w *BinaryWriter) Flush() error {
	w.start()
	return w.w.Flush()
}
