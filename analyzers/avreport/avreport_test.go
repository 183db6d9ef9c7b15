package avreport_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/analyzers/avreport"
	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
	"golang.org/x/tools/go/analysis/analysistest"
)

// The tests copy testdata/mod into a temporary module, write its
// .avcheck/report.json with dynamic/report (as avcheck run does), and run
// the analyzer on the copy.

// copyModule copies testdata/mod into a new temporary directory.
func copyModule(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/mod", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/mod", path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// builder makes a trace's sites and the findings over them.
type builder struct {
	t     *testing.T
	root  string
	rel   bool // name files relative to the module root
	trace *trace.Trace
	seq   uint64
}

// access returns an access by goroutine g of variable obj at the first
// occurrence of expr on line of file (relative to the module root).
func (b *builder) access(file string, line int, expr string, g trace.GoID, op trace.Kind, obj trace.ObjID, role string) predict.Access {
	b.t.Helper()
	data, err := os.ReadFile(filepath.Join(b.root, file))
	if err != nil {
		b.t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	col := strings.Index(lines[line-1], expr) + 1
	if col == 0 {
		b.t.Fatalf("%s:%d has no %q", file, line, expr)
	}
	name := filepath.Join(b.root, file)
	if b.rel {
		name = filepath.FromSlash(file)
	}
	b.trace.Sites = append(b.trace.Sites, trace.Site{File: name, Line: line, Col: col})
	b.seq++
	return predict.Access{Seq: b.seq, G: g, Op: op, Obj: obj, Site: trace.SiteID(len(b.trace.Sites) - 1), Role: role}
}

const (
	cn    trace.ObjID = 0x10 // c.n
	total trace.ObjID = 0x20 // lib.Total
	flag  trace.ObjID = 0x30 // changed.Flag
)

// writeReport writes the report of the module at root, naming files
// relative to root or absolutely, and returns its content.
func writeReport(t *testing.T, root string, rel bool) []byte {
	t.Helper()
	b := &builder{t: t, root: root, rel: rel, trace: &trace.Trace{
		Sites: []trace.Site{{}},
		Objects: map[trace.ObjID]trace.Object{
			cn: {Kind: trace.ObjVar, Name: "c.n"}, total: {Kind: trace.ObjVar, Name: "lib.Total"}, flag: {Kind: trace.ObjVar, Name: "changed.Flag"},
		},
	}}
	rd, wr := trace.KindRead, trace.KindWrite
	atom := func(pattern string, level predict.Level, v string, count int, acc ...predict.Access) predict.Finding {
		return predict.Finding{Kind: predict.KindAtomicity, Pattern: pattern, Level: level, Var: v, Count: count, Accesses: acc}
	}
	race := func(pattern string, v string, acc ...predict.Access) predict.Finding {
		return predict.Finding{Kind: predict.KindRace, Pattern: pattern, Level: predict.LevelPredicted, Var: v, Count: 1, Accesses: acc}
	}
	c, l, u := "counter/counter.go", "lib/lib.go", "use/use.go"
	k, e := "changed/kept.go", "changed/edited.go"
	dropped := atom("R-W-W", predict.LevelPredicted, "c.n", 1,
		b.access(c, 15, "c.n", 1, rd, cn, "first"), b.access(c, 18, "c.n", 2, wr, cn, "interleaved"), b.access(c, 18, "c.n", 1, wr, cn, "last"))
	dropped.Dropped = "AVFilter: the second read saw the interleaved write"
	fs := []predict.Finding{
		atom("R-W-W", predict.LevelFiltered, "c.n", 2,
			b.access(c, 15, "c.n", 1, rd, cn, "first"), b.access(c, 18, "c.n", 2, wr, cn, "interleaved"), b.access(c, 18, "c.n", 1, wr, cn, "last")),
		race("R-W", "c.n", b.access(c, 24, "c.n", 3, rd, cn, "access"), b.access(c, 18, "c.n", 2, wr, cn, "access")),
		// Reported where an //avcheck:ignore covers it.
		race("W-W", "c.n", b.access(c, 29, "c.n", 2, wr, cn, "access"), b.access(c, 18, "c.n", 3, wr, cn, "access")),
		dropped,
		{Kind: predict.KindUnserializable, Pattern: "R-W-W", Level: predict.LevelReplayed, Var: "c.n", Count: 1, Accesses: []predict.Access{
			b.access(c, 35, "c.n", 1, rd, cn, "access"), b.access(c, 36, "c.n", 1, wr, cn, "first"),
		}},
		race("W-W", "lib.Total", b.access(l, 9, "Total", 4, wr, total, "access"), b.access(l, 9, "Total", 5, wr, total, "access")),
		// A related access in another package.
		atom("R-W-R", predict.LevelFiltered, "lib.Total", 1,
			b.access(u, 8, "lib.Total", 5, rd, total, "first"), b.access(l, 9, "Total", 4, wr, total, "interleaved"), b.access(u, 9, "lib.Total", 5, rd, total, "last")),
		race("W-W", "changed.Flag", b.access(k, 9, "Flag", 6, wr, flag, "access"), b.access(k, 14, "Flag", 7, wr, flag, "access")),
		// edited.go changes after the run: neither of these is shown.
		race("W-R", "changed.Flag", b.access(k, 14, "Flag", 6, wr, flag, "access"), b.access(e, 5, "Flag", 7, rd, flag, "access")),
		race("R-W", "changed.Flag", b.access(e, 5, "Flag", 7, rd, flag, "access"), b.access(k, 9, "Flag", 6, wr, flag, "access")),
	}
	doc := report.NewDocument(b.trace, fs, report.Stats{})
	doc.HashFiles(root)
	var buf bytes.Buffer
	if err := doc.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".avcheck", "report.json"), buf.Bytes())
	// The source changes after the run.
	edited := filepath.Join(root, "changed", "edited.go")
	data, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, edited, append([]byte("// Edited after the run.\n"), data...))
	return buf.Bytes()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var patterns = []string{"./counter", "./lib", "./use", "./changed"}

// related lists every diagnostic's related positions and messages, as
// base:line:col: message, diagnostic by diagnostic.
func related(results []*analysistest.Result) []string {
	var out []string
	for _, r := range results {
		for _, d := range r.Diagnostics {
			p := r.Pass.Fset.Position(d.Pos)
			out = append(out, fmt.Sprintf("%s:%d:%d", filepath.Base(p.Filename), p.Line, p.Column))
			for _, rel := range d.Related {
				p := r.Pass.Fset.Position(rel.Pos)
				out = append(out, fmt.Sprintf("\t%s:%d:%d: %s", filepath.Base(p.Filename), p.Line, p.Column, rel.Message))
			}
		}
	}
	return out
}

var wantRelated = []string{
	"counter.go:15:7",
	"\tcounter.go:18:2: g2 writes c.n (interleaved)",
	"\tcounter.go:18:2: g1 writes c.n (last)",
	"counter.go:24:9",
	"\tcounter.go:18:2: g2 writes c.n (access)",
	"counter.go:36:2",
	"\tcounter.go:35:9: g1 reads c.n (access)",
	"lib.go:9:2",
	"\tlib.go:9:2: g5 writes lib.Total (access)",
	"use.go:8:7",
	"\tlib.go:9:2: g4 writes lib.Total (interleaved)",
	"\tuse.go:9:7: g5 reads lib.Total (last)",
	"kept.go:9:2",
	"\tkept.go:14:2: g7 writes changed.Flag (access)",
}

// The findings of the report, at their first access with the others as
// related positions; not the dropped one, not the ignored one, and not
// those with an access in a file changed since the run. File names in the
// report may be absolute (as avcheck run writes them) or relative to the
// module root.
func TestReport(t *testing.T) {
	for _, rel := range []bool{false, true} {
		t.Run(fmt.Sprintf("relative=%v", rel), func(t *testing.T) {
			root := copyModule(t)
			data := writeReport(t, root, rel)
			// Without the hash, and with the right one.
			for _, hash := range []string{"", report.Hash(data)} {
				a := avreport.New(&avreport.Config{Hash: hash})
				results := analysistest.Run(t, root, a, patterns...)
				if got := related(results); strings.Join(got, "\n") != strings.Join(wantRelated, "\n") {
					t.Errorf("hash %q: diagnostics and related positions:\n%s\nwant:\n%s", hash, strings.Join(got, "\n"), strings.Join(wantRelated, "\n"))
				}
			}
		})
	}
}

// A report that names the files through a symbolic link to the module
// (a linked checkout): matched by the files' resolved paths.
func TestReportSymlink(t *testing.T) {
	root := copyModule(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	writeReport(t, link, false)
	data, err := os.ReadFile(filepath.Join(root, ".avcheck", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(link)) {
		t.Fatalf("the report does not name the files through %s", link)
	}
	results := analysistest.Run(t, root, avreport.New(&avreport.Config{}), patterns...)
	if got := related(results); strings.Join(got, "\n") != strings.Join(wantRelated, "\n") {
		t.Errorf("diagnostics and related positions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantRelated, "\n"))
	}
}

// A report given by -avreport.report, relative to the module root.
func TestReportFlag(t *testing.T) {
	root := copyModule(t)
	data := writeReport(t, root, false)
	writeFile(t, filepath.Join(root, "saved", "run1.json"), data)
	if err := os.Remove(filepath.Join(root, ".avcheck", "report.json")); err != nil {
		t.Fatal(err)
	}
	a := avreport.New(&avreport.Config{Report: "saved/run1.json"})
	results := analysistest.Run(t, root, a, patterns...)
	if got := related(results); strings.Join(got, "\n") != strings.Join(wantRelated, "\n") {
		t.Errorf("diagnostics and related positions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantRelated, "\n"))
	}
}

// problemOf runs the analyzer on the counter package of root and returns
// what it reports, as "base:line:col: message" lines: only its one
// diagnostic about the report, if any, at the package clause.
func problemOf(t *testing.T, root string, cfg *avreport.Config) string {
	t.Helper()
	rec := &recorder{}
	results := analysistest.Run(rec, root, avreport.New(cfg), "./counter")
	if len(results) != 1 || results[0].Err != nil {
		t.Fatalf("%d results, want 1 without an error (%v)", len(results), rec.errs)
	}
	var out []string
	for _, d := range results[0].Diagnostics {
		p := results[0].Pass.Fset.Position(d.Pos)
		out = append(out, fmt.Sprintf("%s:%d:%d: %s", filepath.Base(p.Filename), p.Line, p.Column, d.Message))
	}
	return strings.Join(out, "\n")
}

// recorder is an analysistest.Testing that keeps what it is told, so
// that a diagnostic without a want comment does not fail the test.
type recorder struct{ errs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Without a report: nothing, unless a flag says there should be one;
// then one diagnostic at the package clause, not an error, which would
// hide the rest of the suite's findings in go vet.
func TestMissing(t *testing.T) {
	root := copyModule(t)
	path := filepath.Join(root, ".avcheck", "report.json")
	const pre = "counter.go:2:1: avcheck run's report: "
	for _, c := range []struct {
		cfg  avreport.Config
		want string
	}{
		{avreport.Config{}, ""},
		{avreport.Config{Hash: "ab12"}, pre + path + ": no report there: run avcheck run first, or drop the -avreport flags"},
		{avreport.Config{Report: "other.json"}, pre + filepath.Join(root, "other.json") + ": no report there: run avcheck run first, or drop the -avreport flags"},
	} {
		if got := problemOf(t, root, &c.cfg); got != c.want {
			t.Errorf("%+v: error %q, want %q", c.cfg, got, c.want)
		}
	}
}

// A report that is not the JSON report of avcheck run, or whose content
// is not the one -avreport.hash names: one diagnostic naming the file
// (and the line and column in it).
func TestBadReport(t *testing.T) {
	root := copyModule(t)
	path := filepath.Join(root, ".avcheck", "report.json")
	good := writeReport(t, root, false)
	const sum = "0000000000000000000000000000000000000000000000000000000000000000"
	const pre = "counter.go:2:1: avcheck run's report: "
	for _, c := range []struct {
		name    string
		content string
		hash    string
		want    string
	}{
		{"syntax", "{\n  \"version\": 1,\n  \"findings\": [}\n", "",
			pre + path + ":3:16: invalid character '}' looking for beginning of value (want the JSON report of avcheck run; run it again)"},
		{"truncated", "{\n  \"version\": 1,\n", "",
			pre + path + ":3:1: unexpected end of JSON input (want the JSON report of avcheck run; run it again)"},
		{"type", "{\n  \"version\": \"1\"\n}\n", "",
			pre + path + ":2:16: version is a JSON string, want int (want the JSON report of avcheck run; run it again)"},
		{"array", "[]\n", "",
			pre + path + ":1:1: the report is a JSON array, want an object (want the JSON report of avcheck run; run it again)"},
		{"version", "{\"version\": 2, \"findings\": []}\n", "",
			pre + path + ": report schema version 2, want 1 (run avcheck run again with this avcheck)"},
		{"hash", string(good), sum,
			pre + path + ": its sha256 is " + report.Hash(good) + ", not -avreport.hash=" + sum + " (a newer report than the hash, or a mistyped hash): pass -avreport.hash=" + report.Hash(good) + ", which avcheck report-hash prints"},
	} {
		writeFile(t, path, []byte(c.content))
		if got := problemOf(t, root, &avreport.Config{Hash: c.hash}); got != c.want {
			t.Errorf("%s: error\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
