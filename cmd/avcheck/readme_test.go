package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quickStartBlock returns the README's Quick start output: the first
// fenced block of the section "Quick start" that is not a shell command.
func quickStartBlock(t *testing.T, readme string) string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		t.Fatal("README.md has no section \"Quick start\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "\n```")
		if !ok {
			t.Fatal("README.md's Quick start has no output block")
		}
		lang, after, _ := strings.Cut(after, "\n")
		block, tail, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatal("README.md's Quick start has an unterminated block")
		}
		if lang == "" {
			return block
		}
		rest = tail
	}
}

var (
	goroutineID = regexp.MustCompile(`\bg[0-9]+\b`)
	eventNumber = regexp.MustCompile(`#[0-9]+\b`)
)

// renumberGoroutines names the goroutines g1, g2, ... in the order they
// first appear: their ids are the recorded run's, which vary.
func renumberGoroutines(s string) string {
	ids := map[string]string{}
	return goroutineID.ReplaceAllStringFunc(s, func(g string) string {
		if _, ok := ids[g]; !ok {
			ids[g] = fmt.Sprintf("g%d", len(ids)+1)
		}
		return ids[g]
	})
}

// comparable is a finding's text with what varies from one recording of
// the same test to the next left out: the goroutines are renumbered, the
// event numbers dropped, and so are the witness's steps of goroutines
// other than those of the finding's accesses. (In the corpus, those are
// the turn scheduler's, whose reads of its own state fall before or after
// the first goroutine's steps as the recorded run went.) The steps that
// only end a region or a goroutine are left out too: whether the witness
// needs the second goroutine to have ended before the first goes on also
// depends on the order the run recorded.
func comparable(s string) string {
	s = eventNumber.ReplaceAllString(renumberGoroutines(s), "#N")
	own := map[string]bool{}
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if step, ok := strings.CutPrefix(l, "\t\t"); ok {
			if g := goroutineID.FindString(step); g != "" && strings.HasPrefix(step, g+" ") && !own[g] {
				continue
			}
			if f := strings.Fields(step); len(f) > 0 && (f[len(f)-1] == "finish" || f[len(f)-1] == "end") {
				continue
			}
			if f := strings.Fields(step); len(f) > 1 && strings.Contains(f[1], "/internal/turn/") && f[len(f)-1] == "begin" {
				// The test's turn scheduler's regions, which a goroutine
				// of the finding enters before or after the scheduler's
				// own steps, as the run went.
				continue
			}
		} else {
			for _, g := range goroutineID.FindAllString(l, -1) {
				own[g] = true
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "")
}

// The README's Quick start shows what its command prints: the test runs
// it (avcheck run ./testdata/corpus/splitcounter -run TestInc, from the
// module root) and compares the output with the README's block, leaving
// out what varies from run to run (comparable). When the output changes,
// the failure message gives the block to paste into README.md.
func TestQuickStartOutput(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := quickStartBlock(t, string(data))
	if !strings.Contains(string(data), "go run ./cmd/avcheck run ./testdata/corpus/splitcounter -run TestInc ") {
		t.Fatal("README.md's Quick start no longer runs avcheck run ./testdata/corpus/splitcounter -run TestInc: change this test with it")
	}
	bin := buildAvcheck(t, t.TempDir())
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := command(t, root, bin, "run", "-report", filepath.Join(t.TempDir(), "report.json"), "./testdata/corpus/splitcounter", "-run", "TestInc")
	if strings.Contains(r.stderr, "does not permit ptrace") {
		t.Skip("ptrace is not permitted here")
	}
	if r.code != exitFindings {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitFindings, r.stderr)
	}
	got := renumberGoroutines(r.stdout)
	if comparable(got) != comparable(want) {
		t.Error("README.md's Quick start output differs from what the command prints; the block to paste in its place follows, unindented (goroutines renumbered)")
		// Printed as it is: the test log would indent it.
		fmt.Printf("```\n%s```\n", got)
	}
}

// What comparable leaves out: the outputs the Quick start's command gave
// in ten runs compare equal (and a fourth, in CI, whose finding's
// goroutine entered the turn scheduler's regions first), and a change of
// any other line does not.
func TestComparable(t *testing.T) {
	const base = `x.go:20:7: c.n: g5 reads then writes c.n in one region, and g20's write can run between them (R-W-W); the update can be lost
	x.go:23:2: g20 writes c.n (interleaved)
	level: proven, 2 instances
	witness: run the trace's events before #35 as recorded, then:
		g21 turn.go:47:30 finish
		g21 turn.go:51:9 rd s.done
		g5 x.go:19 acq c.mu
		g5 x.go:20:7 rd c.n
		g20 x.go:23:2 wr c.n
`
	same := []string{
		strings.NewReplacer("g5", "g3", "g20", "g22", "g21", "g4", "#35", "#36").Replace(base),
		strings.Replace(base, "\t\tg21 turn.go:51:9 rd s.done\n", "", 1),
		strings.Replace(base, "\t\tg5 x.go:20:7 rd c.n\n", "\t\tg5 x.go:20:7 rd c.n\n\t\tg21 turn.go:51:9 rd s.done\n", 1),
		strings.Replace(base, "\t\tg5 x.go:19 acq c.mu\n", "\t\tg5 testdata/corpus/internal/turn/turn.go:67:2 begin\n\t\tg5 x.go:19 acq c.mu\n", 1),
	}
	for _, s := range same {
		if comparable(s) != comparable(base) {
			t.Errorf("comparable tells apart\n%s\nfrom\n%s", s, base)
		}
	}
	different := []string{
		strings.Replace(base, "2 instances", "3 instances", 1),
		strings.Replace(base, "\t\tg5 x.go:19 acq c.mu\n", "", 1),
		strings.Replace(base, "g20 x.go:23:2 wr", "g5 x.go:23:2 wr", 1),
		strings.Replace(base, "x.go:20:7: c.n", "x.go:21:7: c.n", 1),
	}
	for _, s := range different {
		if comparable(s) == comparable(base) {
			t.Errorf("comparable does not tell apart\n%s\nfrom\n%s", s, base)
		}
	}
}
