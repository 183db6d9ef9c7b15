package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

func testTrace() *trace.Trace {
	return &trace.Trace{
		Sites: []trace.Site{{}, {File: "/src/c.go", Line: 3, Col: 2}, {File: "/src/c.go", Line: 4, Col: 2}, {File: "/src/c.go", Line: 9, Col: 2}},
		Objects: map[trace.ObjID]trace.Object{
			0x10: {Kind: trace.ObjVar, Name: "c.n"}, 0x11: {Kind: trace.ObjVar, Name: "c.m"},
		},
		Events: []trace.Event{
			{Seq: 0, G: 1, Kind: trace.KindRead, Obj: 0x10, Site: 1},
			{Seq: 1, G: 2, Kind: trace.KindWrite, Obj: 0x10, Site: 3},
			{Seq: 2, G: 1, Kind: trace.KindWrite, Obj: 0x10, Site: 2},
		},
	}
}

func triplet(pattern string, ops ...trace.Kind) predict.Finding {
	return predict.Finding{
		Kind: predict.KindAtomicity, Pattern: pattern, Level: predict.LevelFiltered, Var: "c.n", Count: 2,
		Accesses: []predict.Access{
			{Seq: 0, G: 1, Op: ops[0], Obj: 0x10, Site: 1, Role: "first"},
			{Seq: 1, G: 2, Op: ops[1], Obj: 0x10, Site: 3, Role: "interleaved"},
			{Seq: 2, G: 1, Op: ops[2], Obj: 0x10, Site: 2, Role: "last"},
		},
		Witness: []uint64{0, 1, 2},
	}
}

func TestMessage(t *testing.T) {
	tr := testTrace()
	r, w := trace.KindRead, trace.KindWrite
	tests := []struct {
		f    predict.Finding
		want string
	}{
		{triplet("R-W-W", r, w, w), "c.n: g1 reads then writes c.n in one region, and g2's write can run between them (R-W-W); the update can be lost"},
		{triplet("R-W-R", r, w, r), "c.n: g1 reads c.n twice in one region, and g2's write can run between them (R-W-R); the two reads can see different values"},
		{triplet("W-R-W", w, r, w), "c.n: g1 writes c.n twice in one region, and g2's read can run between them (W-R-W); the other goroutine can see an intermediate value"},
		{predict.Finding{Kind: predict.KindRace, Pattern: "W-R", Var: "c.n", Accesses: []predict.Access{{G: 1, Op: w, Obj: 0x10}, {G: 2, Op: r, Obj: 0x10}}},
			"c.n: g1's write and g2's read of c.n can run back to back, with no common lock and no happens-before order (data race W-R)"},
		{predict.Finding{Kind: predict.KindAtomicSet, Pattern: "Wu(x)-Ru'(x)-Ru'(y)-Wu(y)", Var: "c.n, c.m", Accesses: []predict.Access{
			{G: 1, Op: w, Obj: 0x10}, {G: 2, Op: r, Obj: 0x10}, {G: 2, Op: r, Obj: 0x11}, {G: 1, Op: w, Obj: 0x11}}},
			"c.n, c.m: g1's region writes c.n and then writes c.m, and g2's region can access both between them (Wu(x)-Ru'(x)-Ru'(y)-Wu(y)); the pair can be seen or left inconsistent"},
	}
	for _, tt := range tests {
		if got := Message(tr, &tt.f); got != tt.want {
			t.Errorf("Message:\n got %s\nwant %s", got, tt.want)
		}
		if m := Message(tr, &tt.f); strings.HasSuffix(m, ".") || strings.ToLower(m[:1]) != m[:1] {
			t.Errorf("message not lowercase without a final period: %q", m)
		}
	}
}

func TestText(t *testing.T) {
	tr := testTrace()
	var b bytes.Buffer
	if err := Text(&b, tr, []predict.Finding{triplet("R-W-W", trace.KindRead, trace.KindWrite, trace.KindWrite)}, TextOptions{Dir: "/src"}); err != nil {
		t.Fatal(err)
	}
	want := `c.go:3:2: c.n: g1 reads then writes c.n in one region, and g2's write can run between them (R-W-W); the update can be lost
	c.go:9:2: g2 writes c.n (interleaved)
	c.go:4:2: g1 writes c.n (last)
	level: filtered, 2 instances
	witness (its reads' values not checked):
		g1 c.go:3:2 rd c.n
		g2 c.go:9:2 wr c.n
		g1 c.go:4:2 wr c.n
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestJSON(t *testing.T) {
	tr := testTrace()
	var b bytes.Buffer
	f := triplet("R-W-W", trace.KindRead, trace.KindWrite, trace.KindWrite)
	if err := JSON(&b, tr, []predict.Finding{f}, Stats{Events: 3, Goroutines: 2, Variables: 1}); err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != 1 || len(doc.Findings) != 1 || doc.Stats.Events != 3 {
		t.Fatalf("%+v", doc)
	}
	jf := doc.Findings[0]
	if jf.Kind != "atomicity" || jf.Level != "filtered" || jf.Count != 2 || len(jf.Accesses) != 3 || len(jf.Witness) != 3 {
		t.Errorf("%+v", jf)
	}
	if a := jf.Accesses[1]; a.File != "/src/c.go" || a.Line != 9 || a.Col != 2 || a.Op != "wr" || a.Goroutine != 2 || a.Role != "interleaved" {
		t.Errorf("%+v", a)
	}
	if s := jf.Witness[1]; s.Seq != 1 || s.Goroutine != 2 || s.Op != "wr" || s.Object != "c.n" {
		t.Errorf("%+v", s)
	}
	var empty bytes.Buffer
	if err := JSON(&empty, tr, nil, Stats{}); err != nil || !strings.Contains(empty.String(), `"findings": []`) {
		t.Errorf("empty report: %v %s", err, empty.String())
	}
}

// TestJSONStreamed: the report written one finding at a time is, byte for
// byte, what encoding/json's indented Encoder writes of the whole
// document: with no finding, one, several (one with an intent, a note and
// characters that JSON escapes), and with the files' table.
func TestJSONStreamed(t *testing.T) {
	tr := testTrace()
	a := triplet("R-W-W", trace.KindRead, trace.KindWrite, trace.KindWrite)
	b := triplet("W-R-W", trace.KindWrite, trace.KindRead, trace.KindWrite)
	b.Note, b.Dropped, b.Witness = "<no> \"witness\" & more", "", nil
	b.Intent = predict.Intent{Evidence: 2, From: 1, To: 2}
	st := Stats{Events: 3, Goroutines: 2, Variables: 1, Seconds: 0.25}
	for _, fs := range [][]predict.Finding{nil, {a}, {a, b, a}} {
		for _, files := range [][]File{nil, {{File: "/src/c.go", SHA256: "ab"}, {File: "d.go"}}} {
			doc := NewDocument(tr, fs, st)
			doc.Files = files
			var want, got, whole bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(doc); err != nil {
				t.Fatal(err)
			}
			if err := doc.Encode(&got); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%d findings, %d files: Encode wrote\n%s\nwant\n%s", len(fs), len(files), got.String(), want.String())
			}
			if files != nil {
				continue
			}
			if err := JSON(&whole, tr, fs, st); err != nil {
				t.Fatal(err)
			}
			if whole.String() != want.String() {
				t.Errorf("%d findings: JSON wrote\n%s\nwant\n%s", len(fs), whole.String(), want.String())
			}
		}
	}
}

// The goroutines that stand for the program and for code not recorded
// are named so in witnesses, not by their numbers.
func TestGoName(t *testing.T) {
	tr := &trace.Trace{}
	for _, tc := range []struct {
		e    trace.Event
		want string
	}{
		{trace.Event{G: trace.RootG, Kind: trace.KindFork, Arg: 5}, "program - fork g5"},
		{trace.Event{G: trace.OutsideG, Kind: trace.KindFork, Arg: 7}, "outside - fork g7"},
		{trace.Event{G: 3, Kind: trace.KindFork, Arg: 4}, "g3 - fork g4"},
	} {
		if got := step(tr, &tc.e, "", nil); got != tc.want {
			t.Errorf("step %v: %q, want %q", tc.e, got, tc.want)
		}
		if got, want := stepText(tr, &tc.e), strings.Replace(tc.want, " - fork ", " starts ", 1); got != want {
			t.Errorf("stepText %v: %q, want %q", tc.e, got, want)
		}
	}
}
