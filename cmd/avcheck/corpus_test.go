package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/report"
)

// The corpus test runs avcheck run on every program of testdata/corpus and
// checks its findings against testdata/README.md, which holds them in two
// forms: the table (counts per level, in the manner of AVFilter's Table 3)
// and, per test, an "avcheck-findings" block listing every finding that
// "avcheck run -all" shows. The test reads both, checks that the table's
// counts are those of the blocks, and that each run shows exactly its
// block's findings, so the documentation and the tool cannot drift apart.

const corpusReadme = "../../testdata/README.md"

// corpusEntry is one test of the corpus: its block and its table row.
type corpusEntry struct {
	dir, test string
	findings  []string // the block's lines, sorted
	row       []string // the table's cells, nil if the table has no row
	line      int      // the block's header line in the README
}

// The table's columns that the test checks, by their header text.
const (
	colPredicted = "predicted"
	colReported  = "reported"
	colFiltered  = "filtered"
	colProven    = "proven"
)

var rowName = regexp.MustCompile(`^\[([a-z0-9-]+)\]\(corpus/[a-z0-9-]+\)$`)

// parseCorpus reads the README's table and blocks.
func parseCorpus(t testing.TB) ([]*corpusEntry, map[string]int) {
	t.Helper()
	f, err := os.Open(corpusReadme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var entries []*corpusEntry
	byName := make(map[string]*corpusEntry)
	var header map[string]int // column name -> index, from the table's header row
	rows := make(map[string][]string)
	var cur *corpusEntry
	inBlock := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "```avcheck-findings":
			inBlock = true
			cur = nil
		case inBlock && line == "```":
			if cur == nil {
				t.Fatalf("%s:%d: an empty avcheck-findings block", corpusReadme, n)
			}
			slices.Sort(cur.findings)
			inBlock = false
		case inBlock && cur == nil:
			dir, test, ok := strings.Cut(line, " ")
			if !ok || strings.Contains(test, " ") {
				t.Fatalf("%s:%d: want \"<directory> <Test>\" to start the block, got %q", corpusReadme, n, line)
			}
			cur = &corpusEntry{dir: dir, test: test, line: n}
			if byName[dir+" "+test] != nil {
				t.Fatalf("%s:%d: %s %s has two blocks", corpusReadme, n, dir, test)
			}
			byName[dir+" "+test] = cur
			entries = append(entries, cur)
		case inBlock:
			cur.findings = append(cur.findings, strings.Join(strings.Fields(line), " "))
		case strings.HasPrefix(line, "| program |"):
			header = make(map[string]int)
			for i, c := range tableCells(line) {
				header[c] = i
			}
		case strings.HasPrefix(line, "| ["):
			cells := tableCells(line)
			m := rowName.FindStringSubmatch(cells[0])
			if m == nil || len(cells) < 2 {
				t.Fatalf("%s:%d: a table row should start with [dir](corpus/dir) and the test: %q", corpusReadme, n, line)
			}
			rows[m[1]+" "+cells[1]] = cells
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if inBlock {
		t.Fatalf("%s: an avcheck-findings block is not closed", corpusReadme)
	}
	for _, c := range []string{colPredicted, colReported, colFiltered, colProven} {
		if _, ok := header[c]; !ok {
			t.Fatalf("%s: the table has no %q column", corpusReadme, c)
		}
	}
	for k, row := range rows {
		e := byName[k]
		if e == nil {
			t.Fatalf("%s: the table's row %q has no avcheck-findings block", corpusReadme, k)
		}
		e.row = row
	}
	for _, e := range entries {
		if e.row == nil {
			t.Fatalf("%s:%d: %s %s has no row in the table", corpusReadme, e.line, e.dir, e.test)
		}
	}
	return entries, header
}

func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	for c := range strings.SplitSeq(line, "|") {
		cells = append(cells, strings.TrimSpace(c))
	}
	return cells
}

// corpusKey is a finding as the blocks state it, less its levels: kind,
// pattern, variable, and each access as file:line:col:op, in the
// finding's order.
func corpusKey(f report.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", f.Kind, f.Pattern, strings.ReplaceAll(f.Variable, " ", ""))
	for _, a := range f.Accesses {
		fmt.Fprintf(&b, " %s:%d:%d:%s", filepath.Base(a.File), a.Line, a.Col, a.Op)
	}
	return b.String()
}

// corpusLevel is a finding's level as the blocks state it: "dropped" for
// one that only -all shows, else its level.
func corpusLevel(f report.Finding) string {
	if f.Dropped != "" {
		return "dropped"
	}
	return f.Level
}

// corpusLines merges two reports of one trace, without and with the
// precise stage, into the blocks' lines: "<level>/<level> <key>", "-" for
// a finding one of them does not show.
func corpusLines(plain, precise report.Document) []string {
	levels := make(map[string][2]string)
	var keys []string
	for i, doc := range []report.Document{plain, precise} {
		for _, f := range doc.Findings {
			k := corpusKey(f)
			l, ok := levels[k]
			if !ok {
				l = [2]string{"-", "-"}
				keys = append(keys, k)
			}
			l[i] = corpusLevel(f)
			levels[k] = l
		}
	}
	var lines []string
	for _, k := range keys {
		l := levels[k]
		lines = append(lines, l[0]+"/"+l[1]+" "+k)
	}
	slices.Sort(lines)
	return lines
}

// counts returns, for a block, the table's numbers: every finding
// (predicted: what the prediction found before any filter), those at
// level filtered without the precise stage, those at level proven with
// it, and those reported with it (without -all), as avcheck run reports
// by default.
func counts(findings []string) map[string]int {
	c := map[string]int{}
	for _, f := range findings {
		levels, _, _ := strings.Cut(f, " ")
		plain, precise, _ := strings.Cut(levels, "/")
		if plain != "-" {
			c[colPredicted]++
		}
		if plain == "filtered" {
			c[colFiltered]++
		}
		if precise == "proven" {
			c[colProven]++
		}
		if precise != "-" && precise != "dropped" {
			c[colReported]++
		}
	}
	return c
}

// TestCorpusTable checks the README's table against its blocks, without
// recording anything.
func TestCorpusTable(t *testing.T) {
	entries, header := parseCorpus(t)
	for _, e := range entries {
		want := counts(e.findings)
		for _, col := range []string{colPredicted, colFiltered, colProven, colReported} {
			cell := e.row[header[col]]
			n, err := strconv.Atoi(cell)
			if err != nil || n != want[col] {
				t.Errorf("%s:%d: %s %s: the table's %s column says %q, the block has %d", corpusReadme, e.line, e.dir, e.test, col, cell, want[col])
			}
		}
		if _, err := os.Stat(filepath.Join("../../testdata/corpus", e.dir)); err != nil {
			t.Errorf("%s:%d: %v", corpusReadme, e.line, err)
		}
	}
}

// TestCorpus records every test of the corpus, one at a time, keeping the
// trace, and predicts on it twice, with -precise=false (the levels
// predicted and filtered) and with the precise stage (proven); every
// finding of both, with -all, must be its block's. The blocks are the
// default recorder's, the instrumenting one's; the test records each
// test under Delve too (-recorder=delve), whose findings, those that
// avcheck run reports, must be the same, at the same levels, but for the
// names of map elements (mapKey).
func TestCorpus(t *testing.T) {
	t.Parallel()
	entries, _ := parseCorpus(t)
	for _, e := range entries {
		t.Run(e.dir+"/"+e.test, func(t *testing.T) {
			var reported [2][]string
			for i, recorder := range []string{"instrument", "delve"} {
				out := filepath.Join(t.TempDir(), "run.avt")
				r := avcheckRun(t, context.Background(), "-all", "-recorder="+recorder, "-o", out, "./testdata/corpus/"+e.dir, "-run", "^"+e.test+"$")
				if r.code != exitClean && r.code != exitFindings {
					t.Fatalf("avcheck run -recorder=%s: exit %d\n%s", recorder, r.code, r.stderr)
				}
				if !strings.Contains(r.stderr, "avcheck run: the program exited normally;") {
					t.Errorf("-recorder=%s: the test did not end normally under the recorder:\n%s", recorder, r.stderr)
				}
				if strings.Contains(r.stderr, "the trace stops before an impossible event") {
					t.Errorf("-recorder=%s: the trace was cut short:\n%s", recorder, r.stderr)
				}
				precise := corpusPredict(t, "-precise", out)
				reported[i] = reportedLines(precise)
				if recorder != "instrument" {
					continue
				}
				plain := corpusPredict(t, "-precise=false", out)
				got := corpusLines(plain, precise)
				if !slices.Equal(got, e.findings) {
					t.Errorf("%s:%d: avcheck run -all -o run.avt ./testdata/corpus/%s -run '^%s$', then avcheck predict -all [-precise=false] run.avt, show\n%s\nthe README says\n%s",
						corpusReadme, e.line, e.dir, e.test, strings.Join(got, "\n"), strings.Join(e.findings, "\n"))
				}
			}
			if !slices.Equal(reported[0], reported[1]) {
				t.Errorf("-recorder=instrument reports\n%s\n-recorder=delve reports\n%s", strings.Join(reported[0], "\n"), strings.Join(reported[1], "\n"))
			}
		})
	}
}

// reportedLines lists the findings of a report that avcheck run shows
// without -all, as the blocks write them, with the keys of map elements
// left out (mapKey).
func reportedLines(doc report.Document) []string {
	var lines []string
	for _, f := range doc.Findings {
		if f.Dropped == "" {
			lines = append(lines, f.Level+" "+mapKey.ReplaceAllString(corpusKey(f), "[k]"))
		}
	}
	slices.Sort(lines)
	return lines
}

// corpusPredict runs avcheck predict -json -all on a kept trace and checks
// its exit status against its findings.
func corpusPredict(t *testing.T, precise, trace string) report.Document {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := predictMain([]string{"-json", "-all", precise, trace}, &stdout, &stderr)
	var doc report.Document
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("avcheck predict %s: exit %d, the report is not JSON: %v\n%s", precise, code, err, stderr.String())
	}
	want := exitClean
	for _, f := range doc.Findings {
		if f.Dropped == "" {
			want = exitFindings
		}
	}
	if code != want {
		t.Errorf("avcheck predict %s: exit %d, want %d\n%s", precise, code, want, stderr.String())
	}
	return doc
}
