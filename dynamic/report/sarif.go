package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file writes SARIF 2.1.0 (the OASIS Static Analysis Results
// Interchange Format), the format GitHub code scanning reads. The types
// below are the subset of the format avcheck writes; the field names are
// the specification's. GitHub's requirements, which they follow: every
// result has a ruleId naming a rule of tool.driver.rules with short and
// full descriptions and help; a message; one location with a physical
// location; artifact URIs relative to the repository (uriBaseId
// %SRCROOT%) so that alerts map to its files; partialFingerprints that
// stay the same from run to run, so that an alert is matched across runs
// rather than reopened.

// SARIFSchemaURI is the $schema of the logs SARIF writes: the OASIS
// schema of SARIF 2.1.0 with its errata.
const SARIFSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// SrcRoot is the uriBaseId of the files inside the source root.
const SrcRoot = "%SRCROOT%"

// InformationURI is where avcheck's documentation lives.
const InformationURI = "https://github.com/avcheck/avcheck"

// fingerprintKey names avcheck's partial fingerprint; the version suffix
// changes if what it hashes ever does.
const fingerprintKey = "avcheckSites/v1"

// maxFlowSteps bounds a code flow: GitHub shows the first 1000 locations
// of a thread flow. A longer witness keeps its last steps, where the
// violation is.
const maxFlowSteps = 1000

// SARIFLog is a SARIF log file.
type SARIFLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []SARIFRun `json:"runs"`
}

// SARIFRun is one run of a tool.
type SARIFRun struct {
	Tool SARIFTool `json:"tool"`
	// OriginalURIBaseIDs says which directory %SRCROOT% stood for.
	OriginalURIBaseIDs map[string]SARIFArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Results            []SARIFResult                    `json:"results"`
	// Invocations says whether the analysis ran to completion and, if
	// not, what failed.
	Invocations []SARIFInvocation `json:"invocations,omitempty"`
}

// SARIFInvocation is one run of the tool's process.
type SARIFInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []SARIFNotification `json:"toolExecutionNotifications,omitempty"`
}

// SARIFNotification is a problem of the tool itself, not a finding.
type SARIFNotification struct {
	Level   string    `json:"level"`
	Message SARIFText `json:"message"`
}

// SARIFTool describes the tool that made a run.
type SARIFTool struct {
	Driver SARIFDriver `json:"driver"`
}

// SARIFDriver is the tool's main component and its rules.
type SARIFDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []SARIFRule `json:"rules"`
}

// SARIFRule describes one kind of finding (a reportingDescriptor).
type SARIFRule struct {
	ID                   string              `json:"id"`
	Name                 string              `json:"name,omitempty"`
	ShortDescription     SARIFText           `json:"shortDescription"`
	FullDescription      SARIFText           `json:"fullDescription"`
	Help                 SARIFText           `json:"help"`
	HelpURI              string              `json:"helpUri,omitempty"`
	DefaultConfiguration *SARIFConfiguration `json:"defaultConfiguration,omitempty"`
	Properties           map[string]any      `json:"properties,omitempty"`
}

// SARIFConfiguration is a rule's default configuration.
type SARIFConfiguration struct {
	Level string `json:"level"`
}

// SARIFText is a message in plain text and, optionally, Markdown.
type SARIFText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// SARIFResult is one finding.
type SARIFResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             SARIFText         `json:"message"`
	Locations           []SARIFLocation   `json:"locations"`
	RelatedLocations    []SARIFLocation   `json:"relatedLocations,omitempty"`
	CodeFlows           []SARIFCodeFlow   `json:"codeFlows,omitempty"`
	PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
}

// SARIFLocation is a position in a file, with what happens there. IDs of
// related locations start at 1; zero means none.
type SARIFLocation struct {
	ID               int                    `json:"id,omitempty"`
	PhysicalLocation *SARIFPhysicalLocation `json:"physicalLocation,omitempty"`
	Message          *SARIFText             `json:"message,omitempty"`
}

// SARIFPhysicalLocation is a file and a region of it.
type SARIFPhysicalLocation struct {
	ArtifactLocation SARIFArtifactLocation `json:"artifactLocation"`
	Region           *SARIFRegion          `json:"region,omitempty"`
}

// SARIFArtifactLocation names a file: a URI relative to URIBaseID, or
// an absolute file URI.
type SARIFArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// SARIFRegion is a position: 1-based line and column (Go columns count
// bytes; for ASCII source they are the characters SARIF counts).
type SARIFRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// SARIFCodeFlow is a witness: how the program gets to the finding.
type SARIFCodeFlow struct {
	Message     *SARIFText        `json:"message,omitempty"`
	ThreadFlows []SARIFThreadFlow `json:"threadFlows"`
}

// SARIFThreadFlow is a sequence of steps.
type SARIFThreadFlow struct {
	Message   *SARIFText                `json:"message,omitempty"`
	Locations []SARIFThreadFlowLocation `json:"locations"`
}

// SARIFThreadFlowLocation is one step of a thread flow. ExecutionOrder
// is 1-based.
type SARIFThreadFlowLocation struct {
	Location       SARIFLocation  `json:"location"`
	ExecutionOrder int            `json:"executionOrder,omitempty"`
	Properties     map[string]any `json:"properties,omitempty"`
}

// SARIFPaths maps the file names of a report to SARIF artifact
// locations.
type SARIFPaths struct {
	// Root is the directory %SRCROOT% stands for, normally the top of
	// the repository: files inside it are written relative to it, which
	// is what GitHub code scanning needs to map them to the repository.
	// Files outside it are written as absolute file URIs.
	Root string
	// Dir is the directory relative file names are relative to; when
	// empty they are taken as relative to Root.
	Dir string
}

// Artifact returns the artifact location of a file name.
func (p SARIFPaths) Artifact(file string) SARIFArtifactLocation {
	name := filepath.Clean(file)
	if !filepath.IsAbs(name) && p.Dir != "" {
		name = filepath.Join(p.Dir, name)
	}
	if filepath.IsAbs(name) && p.Root != "" {
		if r, err := filepath.Rel(p.Root, name); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			name = r
		}
	}
	if filepath.IsAbs(name) {
		return SARIFArtifactLocation{URI: fileURI(name)}
	}
	return SARIFArtifactLocation{URI: (&url.URL{Path: filepath.ToSlash(name)}).String(), URIBaseID: SrcRoot}
}

// BaseIDs returns the run's originalUriBaseIds: the absolute URI of Root.
func (p SARIFPaths) BaseIDs() map[string]SARIFArtifactLocation {
	if p.Root == "" || !filepath.IsAbs(p.Root) {
		return nil
	}
	uri := fileURI(p.Root)
	if !strings.HasSuffix(uri, "/") {
		uri += "/"
	}
	return map[string]SARIFArtifactLocation{SrcRoot: {URI: uri}}
}

func fileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

// Location returns the SARIF location of a site with a message; a site
// without a file has no physical location.
func (p SARIFPaths) Location(s trace.Site, msg string) SARIFLocation {
	loc := SARIFLocation{}
	if msg != "" {
		loc.Message = &SARIFText{Text: msg}
	}
	if s.File == "" {
		return loc
	}
	pl := &SARIFPhysicalLocation{ArtifactLocation: p.Artifact(s.File)}
	if s.Line > 0 {
		pl.Region = &SARIFRegion{StartLine: s.Line, StartColumn: max(s.Col, 0)}
	}
	loc.PhysicalLocation = pl
	return loc
}

// SARIFOptions configures SARIF.
type SARIFOptions struct {
	// Version is avcheck's version, for tool.driver.version.
	Version string
	// Paths maps the trace's file names to artifact locations.
	Paths SARIFPaths
}

// WriteSARIF writes a SARIF log, indented, with a final newline.
func WriteSARIF(w io.Writer, log *SARIFLog) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

// SARIF writes the findings as a SARIF 2.1.0 log with one run. Each
// finding is a result at its first access, with the other accesses as
// related locations and the witness schedule as a code flow with one
// thread flow whose steps are the schedule's events in order, each with
// its goroutine and operation ("g2 writes c.n"). Findings that -all
// shows although they were dropped are results of level "note" with the
// reason in their properties.
//
// The results are written one at a time: tens of thousands of findings,
// each with a code flow of up to maxFlowSteps steps, are gigabytes of
// JSON, which must not be held in memory whole. The bytes are those
// WriteSARIF writes of NewSARIF's log.
func SARIF(w io.Writer, t *trace.Trace, fs []predict.Finding, opts SARIFOptions) error {
	run, result := newSARIFRun(t, fs, opts)
	var head bytes.Buffer
	if err := WriteSARIF(&head, &SARIFLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []SARIFRun{run}}); err != nil {
		return err
	}
	// The results go in place of the empty array, the only one at the
	// indentation of a run's fields.
	const empty = "\n      \"results\": []"
	at := bytes.Index(head.Bytes(), []byte(empty))
	if at < 0 {
		return fmt.Errorf("SARIF log without its results: %.80q", head.Bytes())
	}
	at += len(empty) - 1
	bw := newStreamWriter(w)
	bw.put(head.Bytes()[:at])
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("        ", "  ")
	enc.SetEscapeHTML(false)
	n := 0
	for i := range fs {
		if bw.err != nil {
			return bw.err
		}
		res, ok := result(i)
		if !ok {
			continue
		}
		b.Reset()
		if err := enc.Encode(res); err != nil {
			return err
		}
		if n > 0 {
			bw.str(",")
		}
		bw.str("\n        ")
		bw.put(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		n++
	}
	if n > 0 {
		bw.str("\n      ")
	}
	bw.put(head.Bytes()[at:])
	return bw.Flush()
}

// NewSARIF builds the SARIF log of findings.
func NewSARIF(t *trace.Trace, fs []predict.Finding, opts SARIFOptions) *SARIFLog {
	run, result := newSARIFRun(t, fs, opts)
	for i := range fs {
		if res, ok := result(i); ok {
			run.Results = append(run.Results, res)
		}
	}
	return &SARIFLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []SARIFRun{run}}
}

// newSARIFRun returns the run of findings fs, with its rules and no
// results yet, and the function that makes the result of fs[i] (false
// for a finding without accesses, which has none).
func newSARIFRun(t *trace.Trace, fs []predict.Finding, opts SARIFOptions) (SARIFRun, func(int) (SARIFResult, bool)) {
	p := opts.Paths
	run := SARIFRun{
		Tool: SARIFTool{Driver: SARIFDriver{
			Name: "avcheck", Version: opts.Version, InformationURI: InformationURI, Rules: []SARIFRule{},
		}},
		OriginalURIBaseIDs: p.BaseIDs(),
		Results:            []SARIFResult{},
	}
	ruleIndex := map[string]int{}
	for i := range fs {
		f := &fs[i]
		if len(f.Accesses) == 0 {
			continue
		}
		id := ruleID(f)
		if _, ok := ruleIndex[id]; !ok {
			ruleIndex[id] = len(run.Tool.Driver.Rules)
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, rule(f))
		}
	}
	bySeq := seqIndex(t)
	result := func(i int) (SARIFResult, bool) {
		f := &fs[i]
		if len(f.Accesses) == 0 {
			return SARIFResult{}, false
		}
		id := ruleID(f)
		res := SARIFResult{
			RuleID:    id,
			RuleIndex: ruleIndex[id],
			Level:     "warning",
			Message:   SARIFText{Text: Message(t, f)},
			Properties: map[string]any{
				"kind":     string(f.Kind),
				"pattern":  f.Pattern,
				"level":    f.Level.String(),
				"variable": f.Var,
				"count":    max(f.Count, 1),
			},
		}
		if f.Dropped != "" {
			res.Level = "note"
			res.Properties["dropped"] = f.Dropped
		}
		if f.Note != "" {
			res.Properties["note"] = f.Note
		}
		if f.Replay != "" {
			res.Properties["replay"] = f.Replay
		}
		if text := IntentText(t, f, ""); text != "" {
			res.Properties["intent"] = f.Intent.Evidence.String()
			res.Properties["intentText"] = text
		}
		first := f.Accesses[0]
		res.Locations = []SARIFLocation{p.Location(t.Site(first.Site), accessText(t, first))}
		for k, a := range f.Accesses[1:] {
			loc := p.Location(t.Site(a.Site), accessText(t, a))
			loc.ID = k + 1
			res.RelatedLocations = append(res.RelatedLocations, loc)
		}
		if flow := codeFlow(t, f, p, bySeq); flow != nil {
			res.CodeFlows = []SARIFCodeFlow{*flow}
		}
		res.Message.Text = LinkRelated(res.Message.Text, res.RelatedLocations)
		res.PartialFingerprints = map[string]string{fingerprintKey: fingerprint(t, f, p)}
		return res, true
	}
	return run, result
}

// LinkRelated returns a result's message with links to its related
// locations appended, "(see [g2 writes c.n (interleaved)](1), ...)":
// GitHub code scanning links to a related location where the message
// embeds a link to it. Square brackets of the message itself are escaped, as
// SARIF's embedded links require (SARIF 2.1.0, section 3.11.6).
func LinkRelated(text string, related []SARIFLocation) string {
	esc := strings.NewReplacer("[", `\[`, "]", `\]`)
	text = esc.Replace(text)
	var links []string
	for _, r := range related {
		label := "related location"
		if r.Message != nil && r.Message.Text != "" {
			label = r.Message.Text
		}
		links = append(links, fmt.Sprintf("[%s](%d)", esc.Replace(label), r.ID))
	}
	if len(links) == 0 {
		return text
	}
	return text + " (see " + strings.Join(links, ", ") + ")"
}

// accessText describes an access of a finding: "g2 writes c.n (interleaved)".
func accessText(t *trace.Trace, a predict.Access) string {
	return fmt.Sprintf("g%d %s %s (%s)", a.G, Verb(a.Op), varOf(t, a), a.Role)
}

// codeFlow turns a finding's witness into a code flow, or nil if it has
// none.
func codeFlow(t *trace.Trace, f *predict.Finding, p SARIFPaths, bySeq func(uint64) (*trace.Event, bool)) *SARIFCodeFlow {
	if len(f.Witness) == 0 {
		return nil
	}
	steps := f.Witness
	var msg string
	if f.WitnessFrom > 0 {
		msg = fmt.Sprintf("witness: run the trace's events before #%d as recorded, then these %d steps", f.WitnessFrom, len(f.Witness))
	} else {
		msg = fmt.Sprintf("witness: a schedule of %d steps that exhibits the violation", len(f.Witness))
	}
	skip := 0
	if len(steps) > maxFlowSteps {
		skip = len(steps) - maxFlowSteps
		steps = steps[skip:]
		msg += fmt.Sprintf("; the first %d are left out here (avcheck predict -json has them all)", skip)
	}
	tf := SARIFThreadFlow{Message: &SARIFText{Text: msg}}
	for k, seq := range steps {
		tl := SARIFThreadFlowLocation{ExecutionOrder: skip + k + 1}
		e, ok := bySeq(seq)
		if !ok {
			tl.Location = SARIFLocation{Message: &SARIFText{Text: fmt.Sprintf("event #%d", seq)}}
		} else {
			tl.Location = p.Location(t.Site(e.Site), stepText(t, e))
			tl.Properties = map[string]any{"goroutine": uint32(e.G), "seq": seq}
		}
		tf.Locations = append(tf.Locations, tl)
	}
	return &SARIFCodeFlow{Message: &SARIFText{Text: msg}, ThreadFlows: []SARIFThreadFlow{tf}}
}

// stepText says what one step of a witness does: "g3 writes c.n".
func stepText(t *trace.Trace, e *trace.Event) string {
	obj := func() string { return varOf(t, predict.Access{Obj: e.Obj}) }
	g := goName(e.G)
	switch e.Kind {
	case trace.KindRead, trace.KindWrite, trace.KindAtomicLoad, trace.KindAtomicStore, trace.KindAtomicRMW:
		return fmt.Sprintf("%s %s %s", g, Verb(e.Kind), obj())
	case trace.KindAcquire:
		return fmt.Sprintf("%s locks %s", g, obj())
	case trace.KindRelease:
		return fmt.Sprintf("%s unlocks %s", g, obj())
	case trace.KindRAcquire:
		return fmt.Sprintf("%s read-locks %s", g, obj())
	case trace.KindRRelease:
		return fmt.Sprintf("%s read-unlocks %s", g, obj())
	case trace.KindFork:
		return fmt.Sprintf("%s starts %s", g, goName(trace.GoID(e.Arg)))
	case trace.KindEnd:
		return fmt.Sprintf("%s returns", g)
	case trace.KindSend:
		return fmt.Sprintf("%s sends on %s", g, obj())
	case trace.KindRecv:
		return fmt.Sprintf("%s receives from %s", g, obj())
	case trace.KindClose:
		return fmt.Sprintf("%s closes %s", g, obj())
	case trace.KindWGAdd:
		return fmt.Sprintf("%s calls Add on %s", g, obj())
	case trace.KindWGDone:
		return fmt.Sprintf("%s calls Done on %s", g, obj())
	case trace.KindWGWait:
		return fmt.Sprintf("%s returns from Wait on %s", g, obj())
	case trace.KindCondWait:
		return fmt.Sprintf("%s wakes from Wait on %s", g, obj())
	case trace.KindCondSignal:
		return fmt.Sprintf("%s calls Signal on %s", g, obj())
	case trace.KindCondBroadcast:
		return fmt.Sprintf("%s calls Broadcast on %s", g, obj())
	case trace.KindOnceDo:
		return fmt.Sprintf("%s returns from Do on %s", g, obj())
	case trace.KindRegionBegin:
		return fmt.Sprintf("%s enters region %d", g, e.Region)
	case trace.KindRegionEnd:
		return fmt.Sprintf("%s leaves region %d", g, e.Region)
	}
	return fmt.Sprintf("%s %s %s", g, e.Kind, obj())
}

// fingerprint identifies a finding across runs by what deduplication
// merges on (dynamic/predict/dedupe.go): its kind, pattern and variable
// and the source site and operation of each access, with the file as
// the SARIF log names it. Goroutine numbers and trace positions, which
// change from run to run, are left out.
func fingerprint(t *trace.Trace, f *predict.Finding, p SARIFPaths) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", f.Kind, f.Pattern, f.Var)
	for _, a := range f.Accesses {
		s := t.Site(a.Site)
		var uri string
		if s.File != "" {
			uri = p.Artifact(s.File).URI
		}
		fmt.Fprintf(h, "\x00%s:%d:%d:%s:%s", uri, s.Line, s.Col, a.Op, a.Role)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// ruleID names the rule of a finding: its kind and pattern, as
// "atomicity/R-W-W" or "race/W-R".
func ruleID(f *predict.Finding) string {
	if f.Pattern == "" {
		return string(f.Kind)
	}
	return string(f.Kind) + "/" + f.Pattern
}

const kindsHelpURI = "https://github.com/avcheck/avcheck/blob/main/docs/predict.md#kinds-of-finding"

// rule describes the rule of a finding's kind and pattern.
func rule(f *predict.Finding) SARIFRule {
	r := SARIFRule{
		ID:                   ruleID(f),
		HelpURI:              kindsHelpURI,
		DefaultConfiguration: &SARIFConfiguration{Level: "warning"},
		Properties: map[string]any{
			"tags": []string{"concurrency", "atomicity"},
			// Every reported finding has a witness schedule that a
			// validator checked.
			"precision":        "high",
			"problem.severity": "warning",
		},
	}
	var short, full, help string
	switch f.Kind {
	case predict.KindAtomicity:
		short = fmt.Sprintf("%s atomicity violation: %s", f.Pattern, consequence(f.Pattern))
		full = fmt.Sprintf("A goroutine accesses a variable twice in one intended atomic region "+
			"(a critical section, an //avcheck:atomic function or block, or accesses a few lines apart), "+
			"and another goroutine's access can run between the two. The three accesses (%s) are not serializable: %s. "+
			"avcheck predicted this interleaving from a recorded run and checked a schedule that realises it.",
			f.Pattern, consequence(f.Pattern))
		help = "Make the region indivisible: hold one lock from the region's first access to its last, " +
			"or replace the read and the write by one atomic operation (sync/atomic Add or CompareAndSwap). " +
			"The code flow is the witness: the schedule in which the other goroutine's access runs inside the region."
	case predict.KindRace:
		short = fmt.Sprintf("data race (%s): two conflicting accesses can run back to back", f.Pattern)
		full = "Two goroutines access a variable, at least one of them writing, with no lock in common and no " +
			"happens-before order between the accesses, and an interleaving of the recorded run runs them back to back."
		help = "Protect both accesses with one lock, order them (a channel operation, WaitGroup.Wait), " +
			"or make every access of the variable atomic (sync/atomic). The code flow is the witness schedule."
	case predict.KindAtomicSet:
		short = "atomic-set violation: two variables of one region can be seen or left inconsistent"
		full = fmt.Sprintf("A region accesses two variables that belong together, and a region of another goroutine "+
			"can access both between the first region's accesses (%s), so that no serial order of the two regions "+
			"explains what they see or leave behind.", f.Pattern)
		help = "Access both variables under one lock held across the whole region in every goroutine, " +
			"or keep them in one value that is replaced atomically. The code flow is the witness schedule."
	case predict.KindUnserializable:
		short = "the recorded run is not conflict-serializable"
		full = "Observed mode: in the run as recorded, the transactions of the goroutines (their regions, " +
			"and each access outside a region) form a cycle of conflicts, so the run is equivalent to no serial order of them."
		help = "Look at the accesses of the cycle: one of the regions involved is not atomic in this run. " +
			"Make it indivisible with one lock held across it."
	default:
		short = fmt.Sprintf("%s %s", f.Kind, f.Pattern)
		full, help = short, short
	}
	r.ShortDescription = SARIFText{Text: short}
	r.FullDescription = SARIFText{Text: full}
	r.Help = SARIFText{Text: help, Markdown: help + fmt.Sprintf("\n\nSee [the kinds of finding](%s).", kindsHelpURI)}
	return r
}
