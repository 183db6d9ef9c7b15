package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
)

// FormatError is a malformed trace file: the one error a reader returns
// for it, naming the file, the position and what was expected.
type FormatError struct {
	File   string // the file name, as given to the reader
	Line   int    // 1-based line of a text file; 0 for a binary file
	Offset int64  // byte offset of the record in a binary file
	Msg    string // what is wrong, such as `unknown event kind "rdd"`
}

// Error returns "file:line: msg" for text files and "file: byte N: msg"
// for binary ones, the forms compilers and editors understand.
func (e *FormatError) Error() string {
	file := e.File
	if file == "" {
		file = "trace"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", file, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: byte %d: %s", file, e.Offset, e.Msg)
}

// Format names a trace file format.
type Format int

// The trace file formats. FormatAuto asks Open to detect the format from
// the file's first bytes.
const (
	FormatAuto   Format = iota
	FormatNative        // compact binary, see docs/trace-formats.md
	FormatText          // line-oriented text, "avtrace 1"
	FormatSTD           // RAPID's STD text format
)

// String returns the name ParseFormat accepts.
func (f Format) String() string {
	switch f {
	case FormatAuto:
		return "auto"
	case FormatNative:
		return "native"
	case FormatText:
		return "text"
	case FormatSTD:
		return "std"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat returns the format named "auto", "native", "text" or "std".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "auto", "":
		return FormatAuto, nil
	case "native", "binary", "avt":
		return FormatNative, nil
	case "text":
		return FormatText, nil
	case "std":
		return FormatSTD, nil
	}
	return FormatAuto, fmt.Errorf("unknown trace format %q (want auto, native, text or std)", s)
}

// Detect guesses the format of a trace from its first bytes: the binary
// magic, the text header, or otherwise RAPID's STD, whose lines carry no
// header.
func Detect(prefix []byte) Format {
	f, _ := detect(prefix)
	return f
}

// detect is Detect, also reporting whether the prefix decides the
// format: it does not when it holds only blank and comment lines, after
// which the text header may still come.
func detect(prefix []byte) (Format, bool) {
	if bytes.HasPrefix(prefix, []byte(binaryMagic)) {
		return FormatNative, true
	}
	// Skip comments and blank lines: the text header may follow them.
	rest := prefix
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if f, ok := detectLine(line); ok {
			return f, true
		}
	}
	return FormatSTD, false
}

// detectLine decides the format from one line of a text file: the text
// header, or a line of STD; a blank or comment line decides nothing.
func detectLine(line []byte) (Format, bool) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0 || line[0] == '#':
		return FormatSTD, false
	case bytes.HasPrefix(line, []byte(textMagic)):
		return FormatText, true
	}
	return FormatSTD, true
}

// detectFile detects the format of the file br reads from its start:
// from br's buffer, and when that holds only comments, by reading the
// file on from its start, to the first line that is not one. A file of
// nothing but blank and comment lines is an empty trace, an error.
func detectFile(br *bufio.Reader, f *os.File, size int64, name string) (Format, error) {
	prefix, err := br.Peek(br.Size())
	if err != nil && !errors.Is(err, io.EOF) {
		return FormatAuto, err // a directory, say
	}
	if format, ok := detect(prefix); ok {
		return format, nil
	}
	if len(prefix) == br.Size() && size > int64(len(prefix)) {
		// A regular file with more than a buffer of comments first.
		lr := bufio.NewReader(io.NewSectionReader(f, 0, size))
		for {
			line, err := lr.ReadBytes('\n')
			if format, ok := detectLine(line); ok {
				return format, nil
			}
			if err != nil {
				break
			}
		}
	} else if len(prefix) == br.Size() {
		// A pipe with more than a buffer of comments first: STD, which
		// has no header, as before.
		return FormatSTD, nil
	}
	return FormatAuto, &FormatError{File: name, Line: 1, Msg: "empty trace: no header and no events"}
}

// File is a Reader over an opened trace file. Close releases the file.
type File struct {
	Reader
	Format Format // the format that was read
	f      *os.File
	size   int64        // the file's size, 0 if unknown
	read   *countReader // counts the bytes read from f
}

// countReader counts the bytes read through it. The count is atomic:
// ReadAhead reads on one goroutine while ReadAll estimates on another.
type countReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// progress returns how many bytes of the file have been read and the
// file's size, for ReadAll to size its event array from.
func (f *File) progress() (read, size int64) { return f.read.n.Load(), f.size }

// Close closes the underlying file.
func (f *File) Close() error { return f.f.Close() }

// Open opens the trace file at path in the given format (FormatAuto
// detects it). For STD, the site and object table PATH.sites is read too
// if it exists. Errors name the file.
func Open(path string, format Format) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	// Errors give the file's base name, short like the compiler's
	// "trace.txt:3: ..." (cmd/avcheck relies on this form).
	name := filepath.Base(path)
	cr := &countReader{r: f}
	var size int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	br := bufio.NewReaderSize(cr, 1<<16)
	if format == FormatAuto {
		if format, err = detectFile(br, f, size, name); err != nil {
			f.Close()
			return nil, err
		}
	}
	var r Reader
	switch format {
	case FormatNative:
		r = NewBinaryReader(br, name)
	case FormatText:
		r = NewTextReader(br, name)
	case FormatSTD:
		sr := NewSTDReader(br, name)
		if sf, err := os.Open(path + sitesSuffix); err == nil {
			err = sr.ReadTable(sf, name+sitesSuffix)
			sf.Close()
			if err != nil {
				f.Close()
				return nil, err
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			f.Close()
			return nil, err
		}
		r = sr
	default:
		f.Close()
		return nil, fmt.Errorf("%s: unknown trace format %v", name, format)
	}
	return &File{Reader: r, Format: format, f: f, size: size, read: cr}, nil
}

// sitesSuffix names the table an STD export writes beside the trace.
const sitesSuffix = ".sites"

// Writer writes a trace. Declarations must precede the events that use
// them; Copy takes care of that.
type Writer interface {
	DeclareSite(SiteID, Site) error
	DeclareObject(ObjID, Object) error
	Write(Event) error
	// Flush writes out anything buffered. It does not close the
	// underlying writer.
	Flush() error
}

// tables is implemented by the readers of this package: the declarations
// read so far, so that ReadAll keeps objects that no event touched.
type tables interface {
	declaredSites() []Site
	declaredObjects() map[ObjID]Object
}

// ReadAll reads the rest of r into memory.
func ReadAll(r Reader) (*Trace, error) { return ReadAllFunc(r, nil) }

// ReadAllFunc is ReadAll that also hands each run of events, as it is
// stored, to each (if not nil): every event once, in order, in runs of up
// to a few thousand. The runs are parts of the trace's event array; each
// must not change them, and they stay as they are after each returns.
func ReadAllFunc(r Reader, each func([]Event)) (*Trace, error) {
	if f, ok := r.(*File); ok {
		r = f.Reader // for its tables
	}
	t := &Trace{Sites: []Site{{}}, Objects: make(map[ObjID]Object)}
	if a, ok := r.(*AheadReader); ok {
		var err error
		if t.Events, err = a.appendAll(nil, each); !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	// The events that Next adds below go to each in runs of aheadBatch.
	handed := len(t.Events)
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			if each != nil && handed < len(t.Events) {
				each(t.Events[handed:])
			}
			break
		}
		if err != nil {
			return nil, err
		}
		t.Events = append(t.Events, e)
		if each != nil && len(t.Events)-handed == aheadBatch {
			each(t.Events[handed:])
			handed = len(t.Events)
		}
		if _, ok := r.(tables); !ok {
			// A foreign Reader: collect the tables as the events use them.
			for int(e.Site) >= len(t.Sites) {
				t.Sites = append(t.Sites, Site{})
			}
			if e.Site != 0 {
				t.Sites[e.Site] = r.Site(e.Site)
			}
			if _, ok := t.Objects[e.Obj]; !ok && e.Kind != KindFork && e.Kind != KindEnd {
				if o := r.Object(e.Obj); o != (Object{}) {
					t.Objects[e.Obj] = o
				}
			}
		}
	}
	if tr, ok := r.(tables); ok {
		if s := tr.declaredSites(); len(s) > 0 {
			t.Sites = append([]Site(nil), s...)
		}
		for id, o := range tr.declaredObjects() {
			t.Objects[id] = o
		}
	}
	return t, nil
}

// Copy writes every remaining event of r to w, declaring each site and
// object before its first use, and flushes w. It returns the number of
// events copied.
func Copy(w Writer, r Reader) (int64, error) {
	var n int64
	sites := make(map[SiteID]bool)
	objs := make(map[ObjID]bool)
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		ids := [3]SiteID{e.Site}
		if e.Kind == KindRegionBegin {
			// The positions of a region's intent are sites too.
			_, ids[1], ids[2] = e.Intent()
		}
		for _, id := range ids {
			if id != 0 && !sites[id] {
				sites[id] = true
				if s := r.Site(id); s != (Site{}) {
					if err := w.DeclareSite(id, s); err != nil {
						return n, err
					}
				}
			}
		}
		if usesObj(e.Kind) && !objs[e.Obj] {
			objs[e.Obj] = true
			if o := r.Object(e.Obj); o != (Object{}) {
				if err := w.DeclareObject(e.Obj, o); err != nil {
					return n, err
				}
			}
		}
		if err := w.Write(e); err != nil {
			return n, err
		}
		n++
	}
	return n, w.Flush()
}

// WriteTrace writes all of t to w: every declaration first, then the
// events.
func WriteTrace(w Writer, t *Trace) error {
	for id, s := range t.Sites {
		if id != 0 && s != (Site{}) {
			if err := w.DeclareSite(SiteID(id), s); err != nil {
				return err
			}
		}
	}
	for _, id := range sortedObjIDs(t.Objects) {
		if err := w.DeclareObject(id, t.Objects[id]); err != nil {
			return err
		}
	}
	for _, e := range t.Events {
		if err := w.Write(e); err != nil {
			return err
		}
	}
	return w.Flush()
}

// Stream returns a Reader over t's events, for engines written against
// Reader and tests that hold a trace in memory.
func (t *Trace) Stream() Reader { return &traceReader{t: t} }

type traceReader struct {
	t *Trace
	i int
}

func (r *traceReader) Next() (Event, error) {
	if r.i >= len(r.t.Events) {
		return Event{}, io.EOF
	}
	r.i++
	return r.t.Events[r.i-1], nil
}

func (r *traceReader) Site(id SiteID) Site               { return r.t.Site(id) }
func (r *traceReader) Object(id ObjID) Object            { return r.t.Object(id) }
func (r *traceReader) declaredSites() []Site             { return r.t.Sites }
func (r *traceReader) declaredObjects() map[ObjID]Object { return r.t.Objects }

// WriteFile writes the events of r to path in the given format
// (FormatAuto means native), through Create, so that a failure leaves
// nothing half-written behind. For STD it also writes the table
// PATH.sites.
func WriteFile(path string, format Format, r Reader) (int64, error) {
	w, err := Create(path, format)
	if err != nil {
		return 0, err
	}
	n, err := Copy(w, r)
	if err != nil {
		w.Abort()
		return n, err
	}
	return n, w.Close()
}

// FileWriter is a Writer to a trace file that appears, complete, only
// when Close succeeds: it writes to a temporary file beside it and
// renames that.
type FileWriter struct {
	Writer
	path      string
	bw        *bufio.Writer
	tmp       *os.File
	tmpSites  *os.File // STD's table, or nil
	closeDone bool
}

// Create starts writing a trace file at path in the given format
// (FormatAuto means native). Call Close to finish it or Abort to drop it.
func Create(path string, format Format) (*FileWriter, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, err
	}
	w := &FileWriter{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 1<<16)}
	switch format {
	case FormatAuto, FormatNative:
		w.Writer = NewBinaryWriter(w.bw)
	case FormatText:
		w.Writer = NewTextWriter(w.bw)
	case FormatSTD:
		if w.tmpSites, err = os.CreateTemp(dir, "."+base+".sites.tmp*"); err != nil {
			w.Abort()
			return nil, err
		}
		w.Writer = NewSTDWriter(w.bw, w.tmpSites)
	default:
		w.Abort()
		return nil, fmt.Errorf("unknown trace format %v", format)
	}
	return w, nil
}

// Close flushes the trace and moves it (and STD's table) into place. On
// failure it removes the temporary files and returns the error.
func (w *FileWriter) Close() error {
	if w.closeDone {
		return errors.New("trace file " + w.path + " already closed")
	}
	err := w.Flush()
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = w.tmp.Close()
	}
	if err == nil && w.tmpSites != nil {
		if err = w.tmpSites.Close(); err == nil {
			err = os.Rename(w.tmpSites.Name(), w.path+sitesSuffix)
		}
	}
	if err == nil {
		err = os.Rename(w.tmp.Name(), w.path)
	}
	if err != nil {
		w.Abort()
		return err
	}
	w.closeDone = true
	return nil
}

// Abort drops the file being written. It is safe after Close, where it
// does nothing.
func (w *FileWriter) Abort() {
	if w.closeDone {
		return
	}
	w.closeDone = true
	w.tmp.Close()
	os.Remove(w.tmp.Name())
	if w.tmpSites != nil {
		w.tmpSites.Close()
		os.Remove(w.tmpSites.Name())
	}
}

// usesObj reports whether events of kind k name an object in Obj.
func usesObj(k Kind) bool {
	switch k {
	case KindFork, KindEnd, KindRegionBegin, KindRegionEnd, KindInvalid:
		return false
	}
	return k < numKinds
}

// objKindFor is the kind of object an event of kind k implies, for
// objects a text or STD trace names without declaring them.
func objKindFor(k Kind) ObjKind {
	switch k {
	case KindAcquire, KindRelease:
		return ObjMutex
	case KindRAcquire, KindRRelease:
		return ObjRWMutex
	case KindSend, KindRecv, KindClose:
		return ObjChan
	case KindWGAdd, KindWGDone, KindWGWait:
		return ObjWaitGroup
	case KindCondWait, KindCondSignal, KindCondBroadcast:
		return ObjCond
	case KindOnceDo:
		return ObjOnce
	}
	return ObjVar
}

var objKindNames = [...]string{
	ObjUnknown:   "unknown",
	ObjVar:       "var",
	ObjMutex:     "mutex",
	ObjRWMutex:   "rwmutex",
	ObjChan:      "chan",
	ObjWaitGroup: "waitgroup",
	ObjCond:      "cond",
	ObjOnce:      "once",
}

// String returns the object kind's name in the text format.
func (k ObjKind) String() string {
	if int(k) < len(objKindNames) {
		return objKindNames[k]
	}
	return "ObjKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseObjKind returns the object kind with the given text-format name.
func ParseObjKind(s string) (ObjKind, bool) {
	for k, n := range objKindNames {
		if n == s {
			return ObjKind(k), true
		}
	}
	return ObjUnknown, false
}

// sortedObjIDs returns the keys of m in increasing order, so that
// writing a trace is deterministic.
func sortedObjIDs(m map[ObjID]Object) []ObjID {
	return slices.Sorted(maps.Keys(m))
}

// declarations are the sites and objects a reader has read so far. Every
// format's reader embeds them, and they give it the Site and Object
// methods of Reader.
type declarations struct {
	sites []Site // indexed by SiteID; sites[0] is the zero Site
	objs  map[ObjID]Object
}

func newDeclarations() declarations {
	return declarations{sites: []Site{{}}, objs: make(map[ObjID]Object)}
}

// Site returns a declared site, or the zero Site.
func (d *declarations) Site(id SiteID) Site {
	if int(id) < len(d.sites) {
		return d.sites[id]
	}
	return Site{}
}

// Object returns what is known of an object, or the zero Object.
func (d *declarations) Object(id ObjID) Object { return d.objs[id] }

func (d *declarations) declaredSites() []Site             { return d.sites }
func (d *declarations) declaredObjects() map[ObjID]Object { return d.objs }
