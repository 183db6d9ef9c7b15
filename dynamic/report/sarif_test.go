package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// The OASIS SARIF 2.1.0 schema; testdata/README.md says where it comes
// from.
//
//go:embed testdata/sarif-schema-2.1.0.json
var sarifSchema []byte

// validateSARIF checks a SARIF log against the official schema, with
// format assertions ("uri", "uri-reference", ...) on.
func validateSARIF(t *testing.T, log []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sarifSchema))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(SARIFSchemaURI, doc); err != nil {
		t.Fatalf("schema: %v", err)
	}
	sch, err := c.Compile(SARIFSchemaURI)
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(log))
	if err != nil {
		t.Fatalf("the SARIF log is not JSON: %v\n%s", err, log)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("the SARIF log does not validate against the SARIF 2.1.0 schema: %v\n%s", err, log)
	}
}

// sarifTrace is a trace with a fork and locks around the accesses of
// testTrace, so that a witness has steps of several kinds.
func sarifTrace() *trace.Trace {
	return &trace.Trace{
		Sites: []trace.Site{{}, {File: "/repo/pkg/c.go", Line: 3, Col: 2}, {File: "/repo/pkg/c.go", Line: 4, Col: 2}, {File: "/repo/pkg/c.go", Line: 9, Col: 2}},
		Objects: map[trace.ObjID]trace.Object{
			0x10: {Kind: trace.ObjVar, Name: "c.n"}, 0x11: {Kind: trace.ObjVar, Name: "c.m"}, 0x20: {Name: "c.mu"},
		},
		Events: []trace.Event{
			{Seq: 0, G: 1, Kind: trace.KindFork, Arg: 2},
			{Seq: 1, G: 1, Kind: trace.KindAcquire, Obj: 0x20},
			{Seq: 2, G: 1, Kind: trace.KindRead, Obj: 0x10, Site: 1},
			{Seq: 3, G: 1, Kind: trace.KindRelease, Obj: 0x20},
			{Seq: 4, G: 2, Kind: trace.KindWrite, Obj: 0x10, Site: 3},
			{Seq: 5, G: 1, Kind: trace.KindWrite, Obj: 0x10, Site: 2},
		},
	}
}

func sarifTriplet() predict.Finding {
	return predict.Finding{
		Kind: predict.KindAtomicity, Pattern: "R-W-W", Level: predict.LevelFiltered, Var: "c.n", Count: 2,
		Accesses: []predict.Access{
			{Seq: 2, G: 1, Op: trace.KindRead, Obj: 0x10, Site: 1, Role: "first"},
			{Seq: 4, G: 2, Op: trace.KindWrite, Obj: 0x10, Site: 3, Role: "interleaved"},
			{Seq: 5, G: 1, Op: trace.KindWrite, Obj: 0x10, Site: 2, Role: "last"},
		},
		Witness: []uint64{0, 1, 2, 3, 4, 5},
	}
}

func sarifOptions() SARIFOptions {
	return SARIFOptions{Version: "v1.2.3", Paths: SARIFPaths{Root: "/repo", Dir: "/repo/pkg"}}
}

func TestSARIFValidates(t *testing.T) {
	tr := sarifTrace()
	race := predict.Finding{Kind: predict.KindRace, Pattern: "W-R", Level: predict.LevelPredicted, Var: "c.n",
		Accesses: []predict.Access{{Seq: 5, G: 1, Op: trace.KindWrite, Obj: 0x10, Site: 2, Role: "access"}, {Seq: 4, G: 2, Op: trace.KindRead, Obj: 0x10, Site: 3, Role: "access"}},
		Witness:  []uint64{0, 4, 5}, WitnessFrom: 1}
	set := predict.Finding{Kind: predict.KindAtomicSet, Pattern: "Wu(x)-Ru'(x)-Ru'(y)-Wu(y)", Level: predict.LevelPredicted, Var: "c.n, c.m",
		Accesses: []predict.Access{
			{G: 1, Op: trace.KindWrite, Obj: 0x10, Site: 1, Role: "first"}, {G: 2, Op: trace.KindRead, Obj: 0x10, Site: 3, Role: "interleaved"},
			{G: 2, Op: trace.KindRead, Obj: 0x11, Site: 3, Role: "interleaved"}, {G: 1, Op: trace.KindWrite, Obj: 0x11, Site: 2, Role: "last"}}}
	dropped := sarifTriplet()
	dropped.Dropped = "AVFilter: g1 branches on the value it read"
	dropped.Witness = nil
	// An unknown site (a lock taken in the runtime) has no physical
	// location; an unnamed file outside the root is an absolute URI.
	outside := sarifTriplet()
	outside.Pattern = "R-W-R"
	tr.Sites = append(tr.Sites, trace.Site{File: "/usr/lib/go/src/sync/mutex.go", Line: 90, Col: 1})
	outside.Accesses[1].Site = 4
	unser := predict.Finding{Kind: predict.KindUnserializable, Pattern: "cycle", Level: predict.LevelPredicted, Var: "c.n",
		Accesses: []predict.Access{{Seq: 2, G: 1, Op: trace.KindRead, Site: 1, Role: "transaction"}, {Seq: 4, G: 2, Op: trace.KindWrite, Obj: 0x10, Site: 3, Role: "source"}, {Seq: 5, G: 1, Op: trace.KindWrite, Obj: 0x10, Site: 2, Role: "closing"}}}

	for _, tc := range []struct {
		name     string
		findings []predict.Finding
		results  int
	}{
		{"findings", []predict.Finding{sarifTriplet(), race, set, dropped, outside, unser}, 6},
		{"none", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := SARIF(&buf, tr, tc.findings, sarifOptions()); err != nil {
				t.Fatal(err)
			}
			validateSARIF(t, buf.Bytes())
			var log SARIFLog
			if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
				t.Fatal(err)
			}
			if len(log.Runs) != 1 || len(log.Runs[0].Results) != tc.results {
				t.Fatalf("want one run with %d results, got:\n%s", tc.results, buf.Bytes())
			}
			if tc.results == 0 && (!strings.Contains(buf.String(), `"results": []`) || !strings.Contains(buf.String(), `"rules": []`)) {
				t.Errorf("an empty report must have empty results and rules arrays, not null:\n%s", buf.Bytes())
			}
		})
	}
}

// The schema accepts much that GitHub code scanning would not use; this
// checks the content of one result exactly.
func TestSARIFResult(t *testing.T) {
	tr := sarifTrace()
	var buf bytes.Buffer
	if err := SARIF(&buf, tr, []predict.Finding{sarifTriplet()}, sarifOptions()); err != nil {
		t.Fatal(err)
	}
	var log SARIFLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if log.Version != "2.1.0" || log.Schema != SARIFSchemaURI {
		t.Errorf("version %q, $schema %q", log.Version, log.Schema)
	}
	d := run.Tool.Driver
	if d.Name != "avcheck" || d.Version != "v1.2.3" || d.InformationURI != InformationURI {
		t.Errorf("driver: %+v", d)
	}
	if len(d.Rules) != 1 || d.Rules[0].ID != "atomicity/R-W-W" || d.Rules[0].ShortDescription.Text != "R-W-W atomicity violation: the update can be lost" ||
		d.Rules[0].FullDescription.Text == "" || d.Rules[0].Help.Text == "" {
		t.Errorf("rules: %+v", d.Rules)
	}
	if got := run.OriginalURIBaseIDs[SrcRoot].URI; got != "file:///repo/" {
		t.Errorf("%%SRCROOT%% is %q, want file:///repo/", got)
	}
	r := run.Results[0]
	if r.RuleID != "atomicity/R-W-W" || r.RuleIndex != 0 || r.Level != "warning" {
		t.Errorf("ruleId %q, ruleIndex %d, level %q", r.RuleID, r.RuleIndex, r.Level)
	}
	if want := "c.n: g1 reads then writes c.n in one region, and g2's write can run between them (R-W-W); the update can be lost" +
		" (see [g2 writes c.n (interleaved)](1), [g1 writes c.n (last)](2))"; r.Message.Text != want {
		t.Errorf("message %q, want %q", r.Message.Text, want)
	}
	loc := func(l SARIFLocation) string {
		s := ""
		if pl := l.PhysicalLocation; pl != nil {
			s = pl.ArtifactLocation.URIBaseID + "/" + pl.ArtifactLocation.URI
			if pl.Region != nil {
				s += ":" + strconv.Itoa(pl.Region.StartLine) + ":" + strconv.Itoa(pl.Region.StartColumn)
			}
		}
		if l.Message != nil {
			s += " " + l.Message.Text
		}
		return s
	}
	var got []string
	for _, l := range r.Locations {
		got = append(got, loc(l))
	}
	for _, l := range r.RelatedLocations {
		got = append(got, "#"+strconv.Itoa(l.ID)+" "+loc(l))
	}
	want := []string{
		"%SRCROOT%/pkg/c.go:3:2 g1 reads c.n (first)",
		"#1 %SRCROOT%/pkg/c.go:9:2 g2 writes c.n (interleaved)",
		"#2 %SRCROOT%/pkg/c.go:4:2 g1 writes c.n (last)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("locations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(r.CodeFlows) != 1 || len(r.CodeFlows[0].ThreadFlows) != 1 {
		t.Fatalf("want one code flow with one thread flow, got %+v", r.CodeFlows)
	}
	got = nil
	for _, s := range r.CodeFlows[0].ThreadFlows[0].Locations {
		got = append(got, strconv.Itoa(s.ExecutionOrder)+" "+loc(s.Location))
	}
	want = []string{
		"1  g1 starts g2",
		"2  g1 locks c.mu",
		"3 %SRCROOT%/pkg/c.go:3:2 g1 reads c.n",
		"4  g1 unlocks c.mu",
		"5 %SRCROOT%/pkg/c.go:9:2 g2 writes c.n",
		"6 %SRCROOT%/pkg/c.go:4:2 g1 writes c.n",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("witness steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.Properties["level"] != "filtered" || r.Properties["count"] != float64(2) {
		t.Errorf("properties: %v", r.Properties)
	}
	if fp := r.PartialFingerprints[fingerprintKey]; len(fp) != 32 {
		t.Errorf("partialFingerprints: %v", r.PartialFingerprints)
	}
}

// A fingerprint depends on the source sites, not on goroutine numbers or
// trace positions, nor on where the repository is checked out.
func TestSARIFFingerprint(t *testing.T) {
	fp := func(tr *trace.Trace, f predict.Finding, root string) string {
		log := NewSARIF(tr, []predict.Finding{f}, SARIFOptions{Paths: SARIFPaths{Root: root}})
		return log.Runs[0].Results[0].PartialFingerprints[fingerprintKey]
	}
	base := fp(sarifTrace(), sarifTriplet(), "/repo")

	renumbered := sarifTriplet()
	for i := range renumbered.Accesses {
		renumbered.Accesses[i].G += 5
		renumbered.Accesses[i].Seq += 100
	}
	renumbered.Count = 7
	if got := fp(sarifTrace(), renumbered, "/repo"); got != base {
		t.Errorf("fingerprint changed with goroutine numbers: %s, was %s", got, base)
	}

	moved := sarifTrace()
	for i := range moved.Sites {
		if moved.Sites[i].File != "" {
			moved.Sites[i].File = "/elsewhere" + strings.TrimPrefix(moved.Sites[i].File, "/repo")
		}
	}
	if got := fp(moved, sarifTriplet(), "/elsewhere"); got != base {
		t.Errorf("fingerprint changed with the checkout's directory: %s, was %s", got, base)
	}

	other := sarifTrace()
	other.Sites[3].Line = 10
	if got := fp(other, sarifTriplet(), "/repo"); got == base {
		t.Errorf("fingerprint did not change with the interleaved access's line")
	}
}

func TestSARIFArtifact(t *testing.T) {
	p := SARIFPaths{Root: "/repo", Dir: "/repo/cmd"}
	for _, tc := range []struct {
		file, uri, base string
	}{
		{"/repo/pkg/c.go", "pkg/c.go", SrcRoot},
		{"main.go", "cmd/main.go", SrcRoot},
		{"../pkg/c.go", "pkg/c.go", SrcRoot},
		{"/repo/with space/c#1.go", "with%20space/c%231.go", SrcRoot},
		{"/repository/c.go", "file:///repository/c.go", ""},
		{"/usr/lib/go/src/sync/mutex.go", "file:///usr/lib/go/src/sync/mutex.go", ""},
	} {
		a := p.Artifact(tc.file)
		if a.URI != tc.uri || a.URIBaseID != tc.base {
			t.Errorf("Artifact(%q) = %q base %q, want %q base %q", tc.file, a.URI, a.URIBaseID, tc.uri, tc.base)
		}
	}
	// Without a directory, relative names are relative to the root.
	if a := (SARIFPaths{Root: "/repo"}).Artifact("c.go"); a.URI != "c.go" || a.URIBaseID != SrcRoot {
		t.Errorf("relative name without Dir: %+v", a)
	}
}

// A long witness keeps its last steps, where the violation is, and says
// how many were left out.
func TestSARIFLongWitness(t *testing.T) {
	tr := sarifTrace()
	f := sarifTriplet()
	f.Witness = nil
	for i := 0; i < maxFlowSteps+5; i++ {
		f.Witness = append(f.Witness, uint64(i%6))
	}
	log := NewSARIF(tr, []predict.Finding{f}, sarifOptions())
	tf := log.Runs[0].Results[0].CodeFlows[0].ThreadFlows[0]
	if len(tf.Locations) != maxFlowSteps || tf.Locations[0].ExecutionOrder != 6 || tf.Locations[maxFlowSteps-1].ExecutionOrder != maxFlowSteps+5 {
		t.Errorf("%d steps from %d to %d; want %d from 6 to %d", len(tf.Locations), tf.Locations[0].ExecutionOrder, tf.Locations[len(tf.Locations)-1].ExecutionOrder, maxFlowSteps, maxFlowSteps+5)
	}
	if !strings.Contains(tf.Message.Text, "the first 5 are left out") {
		t.Errorf("thread flow message %q does not say what was left out", tf.Message.Text)
	}
}

// GitHub code scanning links to the related locations the message links;
// the message's own brackets are escaped.
func TestLinkRelated(t *testing.T) {
	rel := []SARIFLocation{{ID: 1, Message: &SARIFText{Text: "a[j] written here"}}, {ID: 2}}
	want := `a\[i\] and a\[j\] can be lost (see [a\[j\] written here](1), [related location](2))`
	if got := LinkRelated("a[i] and a[j] can be lost", rel); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := LinkRelated("no related", nil); got != "no related" {
		t.Errorf("without related locations: %q", got)
	}
}

// TestSARIFStreamed: the log written one result at a time is, byte for
// byte, what WriteSARIF writes of NewSARIF's log: with no finding, one,
// several of two rules (one dropped, one without a witness, one whose
// message JSON would escape as HTML), and one without accesses, which
// has no result.
func TestSARIFStreamed(t *testing.T) {
	tr := sarifTrace()
	a := sarifTriplet()
	b := sarifTriplet()
	b.Pattern, b.Dropped, b.Note, b.Witness = "W-R-W", "infeasible <here> & there", "a \"note\"", nil
	c := sarifTriplet()
	c.Accesses = nil
	for _, fs := range [][]predict.Finding{nil, {a}, {a, b, c, a}, {c}} {
		var want, got bytes.Buffer
		if err := WriteSARIF(&want, NewSARIF(tr, fs, sarifOptions())); err != nil {
			t.Fatal(err)
		}
		if err := SARIF(&got, tr, fs, sarifOptions()); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d findings: SARIF wrote\n%s\nwant\n%s", len(fs), got.String(), want.String())
		}
	}
}
