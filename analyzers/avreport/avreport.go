package avreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/avcheck/avcheck/analyzers/annotation"
	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
	"github.com/avcheck/avcheck/internal/analyzerdoc"
	"github.com/avcheck/avcheck/internal/diag"
	"golang.org/x/tools/go/analysis"
)

//go:embed doc.go
var doc string

// Category is the diagnostic category of every finding shown from a
// recorded run.
const Category = "recorded-run"

// DefaultReport is where avcheck run writes its report, relative to the
// module root.
const DefaultReport = ".avcheck/report.json"

// Config holds the analyzer's options.
type Config struct {
	// Report is the report's path; "" means DefaultReport at the root of
	// the module of the package analysed. A relative path is taken from
	// that module root.
	Report string
	// Hash is the hex SHA-256 the report must have; "" reads the report
	// whatever its content.
	Hash string
}

// DefaultConfig returns the options avcheck uses unless told otherwise.
func DefaultConfig() *Config { return &Config{} }

// Analyzer is the avreport analyzer with the default options; its flags
// -report and -hash (avreport.report and avreport.hash in the suite) set
// Config.Report and Config.Hash.
var Analyzer = New(DefaultConfig())

// New returns an avreport analyzer with the given options, which its
// flags then set.
func New(cfg *Config) *analysis.Analyzer {
	a := &analysis.Analyzer{
		Name:     "avreport",
		Doc:      analyzerdoc.Extract(doc, "avreport"),
		URL:      "https://pkg.go.dev/github.com/avcheck/avcheck/analyzers/avreport",
		Requires: []*analysis.Analyzer{annotation.Analyzer},
		Run:      func(pass *analysis.Pass) (any, error) { return run(pass, cfg) },
	}
	a.Flags.StringVar(&cfg.Report, "report", cfg.Report, "`path` of the report of avcheck run (default .avcheck/report.json at the module root)")
	a.Flags.StringVar(&cfg.Hash, "hash", cfg.Hash, "the report's `sha256` (avcheck report-hash prints it), so that go vet's cache sees a new report")
	return a
}

func run(pass *analysis.Pass, cfg *Config) (any, error) {
	// The package's files by their cleaned absolute names.
	files := map[string]*token.File{}
	var dir string
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.FileStart)
		if tf == nil {
			continue
		}
		name := absClean(tf.Name())
		files[name] = tf
		if dir == "" {
			dir = filepath.Dir(name)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	root := ModuleRoot(dir)
	d, path, err := load(cfg, dir, root)
	if err != nil {
		// Not an error of the analysis: go vet shows only the error of a
		// package whose analysis fails, and would hide the rest of the
		// suite's findings.
		pass.Report(analysis.Diagnostic{Pos: pass.Files[0].Package, Category: Category, Message: "avcheck run's report: " + err.Error()})
		return nil, nil
	}
	if d == nil {
		return nil, nil
	}
	s := &state{
		pass:   pass,
		ign:    pass.ResultOf[annotation.Analyzer].(*annotation.Set),
		files:  files,
		base:   root,
		want:   map[string]string{},
		same:   map[string]bool{},
		others: map[string]*token.File{},
	}
	if root == "" {
		// A report written by avcheck run sits in <module root>/.avcheck.
		s.base = filepath.Dir(filepath.Dir(path))
	}
	for _, f := range d.Files {
		s.want[s.resolve(f.File)] = f.SHA256
	}
	for i := range d.Findings {
		s.show(&d.Findings[i])
	}
	return nil, nil
}

// load reads and decodes the report for a package of directory dir in
// the module at root (or none); it returns a nil report when there is
// none and no flag asks for one.
func load(cfg *Config, dir, root string) (d *Document, path string, err error) {
	path = cfg.Report
	switch {
	case path == "" && root == "":
		// Outside any module there is no default report.
		if cfg.Hash != "" {
			return nil, "", fmt.Errorf("-avreport.hash is set, but %s is in no module: give the report's path with -avreport.report", dir)
		}
		return nil, "", nil
	case path == "":
		path = filepath.Join(root, DefaultReport)
	case !filepath.IsAbs(path) && root != "":
		path = filepath.Join(root, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && cfg.Report == "" && cfg.Hash == "" {
			// The static suite, for users who never ran avcheck run.
			return nil, "", nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("%s: no report there: run avcheck run first, or drop the -avreport flags", path)
		}
		return nil, "", err
	}
	if cfg.Hash != "" {
		if got := report.Hash(data); !strings.EqualFold(got, cfg.Hash) {
			return nil, "", fmt.Errorf("%s: its sha256 is %s, not -avreport.hash=%s (a newer report than the hash, or a mistyped hash): pass -avreport.hash=%s, which avcheck report-hash prints", path, got, cfg.Hash, got)
		}
	}
	d, err = Decode(path, data)
	return d, path, err
}

// Document is the part of the JSON report (report.Document) that avreport
// reads: not the witnesses, which can be most of a large report.
type Document struct {
	Version  int           `json:"version"`
	Findings []Finding     `json:"findings"`
	Files    []report.File `json:"files"`
}

// Finding is the part of a report.Finding that avreport reads.
type Finding struct {
	Level    string          `json:"level"`
	Variable string          `json:"variable"`
	Message  string          `json:"message"`
	Count    int             `json:"count"`
	Accesses []report.Access `json:"accesses"`
	Dropped  string          `json:"dropped"`
}

// Decode decodes a report, saying where in the file (line:col) it is not
// the JSON report of avcheck run, and which schema versions it reads.
func Decode(path string, data []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(data, &d); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			line, col := lineCol(data, syn.Offset)
			return nil, fmt.Errorf("%s:%d:%d: %w (want the JSON report of avcheck run; run it again)", path, line, col, syn)
		case errors.As(err, &typ) && typ.Field == "":
			// The whole file, whose Go type means nothing to the user.
			line, col := lineCol(data, typ.Offset)
			return nil, fmt.Errorf("%s:%d:%d: the report is a JSON %s, want an object (want the JSON report of avcheck run; run it again)", path, line, col, typ.Value)
		case errors.As(err, &typ):
			line, col := lineCol(data, typ.Offset)
			return nil, fmt.Errorf("%s:%d:%d: %s is a JSON %s, want %s (want the JSON report of avcheck run; run it again)", path, line, col, typ.Field, typ.Value, typ.Type)
		}
		return nil, fmt.Errorf("%s: %w (want the JSON report of avcheck run; run it again)", path, err)
	}
	if d.Version != report.Version {
		return nil, fmt.Errorf("%s: report schema version %d, want %d (run avcheck run again with this avcheck)", path, d.Version, report.Version)
	}
	return &d, nil
}

// lineCol turns a byte offset of data (the end of what the decoder read)
// into a 1-based line and column, as an editor counts them.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	// The decoder's offset is just past the offending byte, or the end
	// of a file cut short.
	if len(before) > 0 && off < int64(len(data)) {
		before = before[:len(before)-1]
	}
	line = 1 + bytes.Count(before, []byte("\n"))
	col = 1 + len(before) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}

// state is the work on one package.
type state struct {
	pass  *analysis.Pass
	ign   diag.Ignorer
	files map[string]*token.File // the package's own files
	real  map[string]*token.File // the same by their paths without symbolic links, when needed
	// lookup remembers the answer of pkgFile for other names.
	lookup map[string]*token.File
	base   string            // what relative names in the report are relative to
	want   map[string]string // file -> SHA-256 in the report
	same   map[string]bool   // file -> its content still has that hash
	// others holds the files of related positions outside the package,
	// added to the pass's FileSet once.
	others map[string]*token.File
}

func (s *state) resolve(name string) string {
	if !filepath.IsAbs(name) {
		name = filepath.Join(s.base, name)
	}
	return filepath.Clean(name)
}

// unchanged reports whether file still has the content the report saw.
func (s *state) unchanged(file string) bool {
	if ok, seen := s.same[file]; seen {
		return ok
	}
	want, listed := s.want[file]
	ok := false
	if listed && want != "" {
		if data, err := os.ReadFile(file); err == nil {
			ok = report.Hash(data) == want
		}
	}
	s.same[file] = ok
	return ok
}

// show reports f if its first access is in the package and every file it
// names is unchanged.
func (s *state) show(f *Finding) {
	if f.Dropped != "" || len(f.Accesses) == 0 {
		return
	}
	first := 0
	for i, a := range f.Accesses {
		if a.Role == "first" {
			first = i
			break
		}
	}
	a0 := f.Accesses[first]
	if a0.File == "" {
		return
	}
	tf := s.pkgFile(s.resolve(a0.File))
	if tf == nil {
		return
	}
	for _, a := range f.Accesses {
		if a.File != "" && !s.unchanged(s.resolve(a.File)) {
			return
		}
	}
	pos, ok := position(tf, a0.Line, a0.Col)
	if !ok {
		return
	}
	var related []diag.Related
	for i, a := range f.Accesses {
		if i == first || a.File == "" {
			continue
		}
		rtf := s.file(s.resolve(a.File))
		if rtf == nil {
			continue
		}
		if p, ok := position(rtf, a.Line, a.Col); ok {
			related = append(related, diag.Related{Pos: p, Message: relatedMessage(f, a)})
		}
	}
	level := f.Level
	if f.Count > 1 {
		level += fmt.Sprintf(", %d instances", f.Count)
	}
	diag.Report(s.pass, s.ign, Category, pos, related, "%s (avcheck run: %s)", f.Message, level)
}

// pkgFile returns the package's file of that name, or nil. The build
// that was recorded and the analysis may name a file through different
// symbolic links (a temporary directory, a linked checkout).
func (s *state) pkgFile(name string) *token.File {
	if tf := s.files[name]; tf != nil {
		return tf
	}
	if s.real == nil {
		s.real, s.lookup = map[string]*token.File{}, map[string]*token.File{}
		for n, tf := range s.files {
			if r, err := filepath.EvalSymlinks(n); err == nil {
				s.real[r] = tf
			}
		}
	}
	tf, seen := s.lookup[name]
	if !seen {
		if r, err := filepath.EvalSymlinks(name); err == nil {
			tf = s.real[r]
		}
		s.lookup[name] = tf
	}
	return tf
}

// file returns the token.File of a file named by a related access: the
// package's own, or one added to the pass's FileSet (which Run may
// extend) with the lines of the file's content on disk, which unchanged
// has checked.
func (s *state) file(name string) *token.File {
	if tf := s.pkgFile(name); tf != nil {
		return tf
	}
	if tf, ok := s.others[name]; ok {
		return tf
	}
	var tf *token.File
	if data, err := os.ReadFile(name); err == nil {
		tf = s.pass.Fset.AddFile(name, -1, len(data))
		tf.SetLinesForContent(data)
	}
	s.others[name] = tf
	return tf
}

// position returns the position of line:col (col counts bytes from 1; 0
// means the line's start) in tf, and false when the file has no such
// position.
func position(tf *token.File, line, col int) (token.Pos, bool) {
	if line < 1 || line > tf.LineCount() || col < 0 {
		return token.NoPos, false
	}
	start := tf.LineStart(line)
	end := tf.Base() + tf.Size()
	if line < tf.LineCount() {
		end = int(tf.LineStart(line + 1))
	}
	if col > 0 {
		// A column just past the line's last byte is its newline.
		if int(start)+col-1 >= end {
			return token.NoPos, false
		}
		return start + token.Pos(col-1), true
	}
	return start, true
}

// relatedMessage says what another access of a finding does, as the text
// report does: "g20 writes c.n (interleaved)".
func relatedMessage(f *Finding, a report.Access) string {
	obj := a.Object
	if obj == "" {
		obj = f.Variable
	}
	return fmt.Sprintf("g%d %s %s (%s)", a.Goroutine, verb(a.Op), obj, a.Role)
}

// verb says what an access does, as the text report words it.
func verb(op string) string {
	if k, ok := trace.ParseKind(op); ok {
		return report.Verb(k)
	}
	return op
}

// ModuleRoot returns the directory of the go.mod governing dir, or "".
func ModuleRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func absClean(name string) string {
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return filepath.Clean(name)
}
