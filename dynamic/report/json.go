package report

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// Version is the version of the JSON schema JSON writes. Fields are only
// ever added within a version; a change of meaning bumps it.
const Version = 1

// Document is the JSON report (schema version 1, docs/predict.md).
type Document struct {
	Version  int       `json:"version"`
	Findings []Finding `json:"findings"`
	Stats    Stats     `json:"stats"`
	// Files lists the source files that the findings' accesses name, with
	// their content's hash when the report was written (see HashFiles),
	// so that a reader can tell whether a position still holds.
	Files []File `json:"files,omitempty"`
}

// File is a source file named by a report's findings.
type File struct {
	File string `json:"file"`
	// SHA256 is the hex SHA-256 of the file's content, or "" when it
	// could not be read.
	SHA256 string `json:"sha256"`
}

// Finding is one finding in the JSON report.
type Finding struct {
	Kind        string   `json:"kind"`
	Pattern     string   `json:"pattern"`
	Level       string   `json:"level"`
	Variable    string   `json:"variable"`
	Message     string   `json:"message"`
	Count       int      `json:"count"`
	Accesses    []Access `json:"accesses"`
	WitnessFrom uint64   `json:"witness_from"`
	Witness     []Step   `json:"witness"`
	Dropped     string   `json:"dropped,omitempty"`
	// Note says what the level leaves out (Finding.Note).
	Note string `json:"note,omitempty"`
	// Replay says what a replay of the witness showed, or why it did
	// not confirm the finding (Finding.Replay).
	Replay string `json:"replay,omitempty"`
	// Intent is why the finding's region is meant to be atomic; absent
	// for a race, and for a trace that does not say.
	Intent *Intent `json:"intent,omitempty"`
	// Tests are the top-level tests whose goroutines made the accesses,
	// in a recorded test run (testIndex).
	Tests []string `json:"tests,omitempty"`
}

// Intent is the evidence that a finding's region is meant to be atomic.
type Intent struct {
	// Evidence is its kind: "none", "annotation", "critical-section",
	// "write-back", "branch" or "read-pair" (internal/intent).
	Evidence string `json:"evidence"`
	Text     string `json:"text"`
	// From and To are the accesses it links, for the kinds that follow
	// a value read.
	From *Position `json:"from,omitempty"`
	To   *Position `json:"to,omitempty"`
}

// Position is a source position in the JSON report.
type Position struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// Access is one access of a finding in the JSON report.
type Access struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Col       int    `json:"col"`
	Op        string `json:"op"`
	Goroutine uint32 `json:"goroutine"`
	Role      string `json:"role"`
	Seq       uint64 `json:"seq"`
	Object    string `json:"object,omitempty"`
}

// Step is one event of a witness schedule in the JSON report.
type Step struct {
	Seq       uint64 `json:"seq"`
	Goroutine uint32 `json:"goroutine"`
	Op        string `json:"op"`
	Object    string `json:"object,omitempty"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	Col       int    `json:"col,omitempty"`
}

// NewDocument builds the JSON report of findings.
func NewDocument(t *trace.Trace, fs []predict.Finding, st Stats) *Document {
	doc := &Document{Version: Version, Findings: make([]Finding, 0, len(fs)), Stats: st}
	bySeq := seqIndex(t)
	tests := newTestIndex(t, fs)
	for i := range fs {
		doc.Findings = append(doc.Findings, newFinding(t, bySeq, tests, &fs[i]))
	}
	return doc
}

// newFinding is f in the JSON report.
func newFinding(t *trace.Trace, bySeq func(uint64) (*trace.Event, bool), tests *testIndex, f *predict.Finding) Finding {
	jf := Finding{
		Kind:        string(f.Kind),
		Pattern:     f.Pattern,
		Level:       f.Level.String(),
		Variable:    f.Var,
		Message:     Message(t, f),
		Count:       max(f.Count, 1),
		Accesses:    []Access{},
		WitnessFrom: f.WitnessFrom,
		Witness:     make([]Step, 0, len(f.Witness)),
		Dropped:     f.Dropped,
		Note:        f.Note,
		Replay:      f.Replay,
		Tests:       tests.tests(goroutines(f)),
	}
	if text := IntentText(t, f, ""); text != "" {
		in := &Intent{Evidence: f.Intent.Evidence.String(), Text: text}
		pos := func(id trace.SiteID) *Position {
			if id == 0 {
				return nil
			}
			s := t.Site(id)
			return &Position{File: s.File, Line: s.Line, Col: s.Col}
		}
		in.From, in.To = pos(f.Intent.From), pos(f.Intent.To)
		jf.Intent = in
	}
	for _, a := range f.Accesses {
		s := t.Site(a.Site)
		jf.Accesses = append(jf.Accesses, Access{
			File: s.File, Line: s.Line, Col: s.Col, Op: a.Op.String(),
			Goroutine: uint32(a.G), Role: a.Role, Seq: a.Seq, Object: varOf(t, a),
		})
	}
	for _, seq := range f.Witness {
		st := Step{Seq: seq}
		if e, ok := bySeq(seq); ok {
			s := t.Site(e.Site)
			st.Goroutine, st.Op = uint32(e.G), e.Kind.String()
			st.File, st.Line, st.Col = s.File, s.Line, s.Col
			if hasObject(e.Kind) {
				st.Object = varOf(t, predict.Access{Obj: e.Obj})
			}
		}
		jf.Witness = append(jf.Witness, st)
	}
	return jf
}

// HashFiles sets d.Files to the files that d's findings' accesses name,
// sorted, each with the SHA-256 of its content as it is now; a relative
// name is read relative to dir. Sources edited after this no longer
// match, which is how analyzers/avreport knows to skip their findings.
func (d *Document) HashFiles(dir string) {
	var names []string
	for _, f := range d.Findings {
		for _, a := range f.Accesses {
			if a.File != "" {
				names = append(names, a.File)
			}
		}
	}
	slices.Sort(names)
	d.Files = []File{}
	for _, name := range slices.Compact(names) {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		f := File{File: name}
		if data, err := os.ReadFile(path); err == nil {
			f.SHA256 = Hash(data)
		}
		d.Files = append(d.Files, f)
	}
}

// Hash returns the hex SHA-256 of data: of a source file in the report's
// Files table, and of the report itself, the value of avreport's
// -avreport.hash. avreport compares both with what it reads.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Encode writes d indented, with a final newline.
func (d *Document) Encode(w io.Writer) error {
	return encodeDocument(w, d.Version, len(d.Findings), func(i int) Finding { return d.Findings[i] }, d.Stats, d.Files)
}

// JSON writes the JSON report of findings, indented, with a final newline.
// It converts and writes one finding at a time: a report of tens of
// thousands of findings, each with a witness of hundreds of steps, is
// gigabytes of JSON, which must not be held in memory whole.
func JSON(w io.Writer, t *trace.Trace, fs []predict.Finding, st Stats) error {
	bySeq := seqIndex(t)
	tests := newTestIndex(t, fs)
	return encodeDocument(w, Version, len(fs), func(i int) Finding { return newFinding(t, bySeq, tests, &fs[i]) }, st, nil)
}

// streamWriter buffers a report written in pieces. It keeps the first
// write's error, which err and Flush return, so that the pieces need no
// checking and the writer stops between findings once one fails.
type streamWriter struct {
	bw  *bufio.Writer
	err error
}

func newStreamWriter(w io.Writer) *streamWriter {
	return &streamWriter{bw: bufio.NewWriterSize(w, 1<<16)}
}

func (w *streamWriter) str(s string) {
	if w.err == nil {
		_, w.err = w.bw.WriteString(s)
	}
}

func (w *streamWriter) put(b []byte) {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
}

// Flush writes what is buffered and returns the first error.
func (w *streamWriter) Flush() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// encodeDocument writes a Document of n findings, finding(i) giving each,
// byte for byte as encoding/json's indented Encoder writes the whole,
// one finding at a time.
func encodeDocument(w io.Writer, version, n int, finding func(int) Finding, st Stats, files []File) error {
	bw := newStreamWriter(w)
	bw.str(fmt.Sprintf("{\n  \"version\": %d,\n  \"findings\": [", version))
	for i := range n {
		if bw.err != nil {
			return bw.err
		}
		b, err := json.MarshalIndent(finding(i), "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			bw.str(",")
		}
		bw.str("\n    ")
		bw.put(b)
	}
	if n > 0 {
		bw.str("\n  ")
	}
	b, err := json.MarshalIndent(st, "  ", "  ")
	if err != nil {
		return err
	}
	bw.str("],\n  \"stats\": ")
	bw.put(b)
	if len(files) > 0 {
		if b, err = json.MarshalIndent(files, "  ", "  "); err != nil {
			return err
		}
		bw.str(",\n  \"files\": ")
		bw.put(b)
	}
	bw.str("\n}\n")
	return bw.Flush()
}
