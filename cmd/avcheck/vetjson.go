package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
	"golang.org/x/tools/go/analysis"
)

// The standalone suite's -json output has the shape go vet -json prints:
//
//	{"<package ID>": {"<analyzer>": [<diagnostic>...] or {"error": "..."}}}
//
// (the JSON tree of golang.org/x/tools/go/analysis; each diagnostic has
// category, posn, end, message, and related and suggested_fixes when it
// has them). go vet runs one process per package and prints one such
// object each; avcheck prints one object for all the packages, and
// rewrites the multichecker's tree into what go vet would print:
//
//   - a package analysed with its in-package tests is named as go vet
//     names it, "P" rather than "P [P.test]", and replaces the analysis
//     of P without them (go vet analyses only the package with its tests);
//   - the entries that only say an analyzer did not run because the
//     package does not build ("analysis skipped due to errors in
//     package", "failed prerequisites: ...") are dropped, as the text mode
//     drops those lines: go vet prints the compiler's errors instead, on
//     standard error, and so does avcheck.

// vetTree is the JSON tree: package ID to analyzer name to diagnostics
// or an error.
type vetTree map[string]map[string]json.RawMessage

// vetDiagnostic is a diagnostic of the JSON tree.
type vetDiagnostic struct {
	Category string `json:"category"`
	Posn     string `json:"posn"`
	Message  string `json:"message"`
	Related  []struct {
		Posn    string `json:"posn"`
		Message string `json:"message"`
	} `json:"related"`
}

// vetError is an analyzer's entry when it failed.
type vetError struct {
	Error string `json:"error"`
}

// normalizeVetJSON rewrites the multichecker's JSON tree as go vet would
// print it (see above) and counts its diagnostics and errors.
func normalizeVetJSON(data []byte) (tree vetTree, diags, errs int, err error) {
	var in vetTree
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, 0, 0, err
	}
	tree = vetTree{}
	// Sorted, so that "P [P.test]" comes after "P" and replaces it.
	ids := make([]string, 0, len(in))
	for id := range in {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		name := id
		if base, variant, ok := strings.Cut(id, " ["); ok && strings.HasSuffix(variant, ".test]") {
			name = base
		}
		entries := map[string]json.RawMessage{}
		for analyzer, raw := range in[id] {
			var e vetError
			if json.Unmarshal(raw, &e) == nil && e.Error != "" && cascade.MatchString(analyzer+": "+e.Error) {
				continue
			}
			entries[analyzer] = raw
		}
		if len(entries) == 0 {
			delete(tree, name)
			continue
		}
		tree[name] = entries
	}
	for _, entries := range tree {
		for _, raw := range entries {
			var ds []json.RawMessage
			if json.Unmarshal(raw, &ds) == nil {
				diags += len(ds)
			} else {
				errs++
			}
		}
	}
	return tree, diags, errs, nil
}

// print writes the tree as the analysis drivers do: indented with tabs,
// keys sorted, a final newline.
func (t vetTree) print(w io.Writer) error {
	data, err := json.MarshalIndent(t, "", "\t")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// sarif converts the tree to a SARIF 2.1.0 log: one rule per analyzer
// and category of finding, one result per diagnostic at its position
// with its related positions, and the analyzers that failed as
// notifications of an unsuccessful invocation.
func (t vetTree) sarif(analyzers []*analysis.Analyzer, opts report.SARIFOptions, loadFailed bool) *report.SARIFLog {
	docs := map[string]string{}
	for _, a := range analyzers {
		docs[a.Name] = a.Doc
	}
	p := opts.Paths
	run := report.SARIFRun{
		Tool: report.SARIFTool{Driver: report.SARIFDriver{
			Name: "avcheck", Version: opts.Version, InformationURI: report.InformationURI, Rules: []report.SARIFRule{},
		}},
		OriginalURIBaseIDs: p.BaseIDs(),
		Results:            []report.SARIFResult{},
	}
	ruleIndex := map[string]int{}
	var failures []report.SARIFNotification
	ids := make([]string, 0, len(t))
	for id := range t {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// Diagnostics of a package's files can come twice (a package and its
	// external test package share none, but a driver may repeat one);
	// code scanning needs each once.
	seen := map[string]bool{}
	for _, id := range ids {
		names := make([]string, 0, len(t[id]))
		for name := range t[id] {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			raw := t[id][name]
			var ds []vetDiagnostic
			if err := json.Unmarshal(raw, &ds); err != nil {
				var e vetError
				_ = json.Unmarshal(raw, &e)
				failures = append(failures, report.SARIFNotification{
					Level:   "error",
					Message: report.SARIFText{Text: fmt.Sprintf("%s: %s: %s", id, name, e.Error)},
				})
				continue
			}
			for _, d := range ds {
				ruleID := name
				if d.Category != "" {
					ruleID += "/" + d.Category
				}
				idx, ok := ruleIndex[ruleID]
				if !ok {
					idx = len(run.Tool.Driver.Rules)
					ruleIndex[ruleID] = idx
					run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, analyzerRule(ruleID, name, docs[name]))
				}
				loc := p.Location(parsePosn(d.Posn), "")
				res := report.SARIFResult{
					RuleID:    ruleID,
					RuleIndex: idx,
					Level:     "warning",
					Message:   report.SARIFText{Text: d.Message},
					Locations: []report.SARIFLocation{loc},
				}
				h := sha256.New()
				fmt.Fprintf(h, "%s\x00%s\x00%s", ruleID, locString(loc), d.Message)
				for k, r := range d.Related {
					rl := p.Location(parsePosn(r.Posn), r.Message)
					rl.ID = k + 1
					res.RelatedLocations = append(res.RelatedLocations, rl)
					fmt.Fprintf(h, "\x00%s\x00%s", locString(rl), r.Message)
				}
				res.Message.Text = report.LinkRelated(d.Message, res.RelatedLocations)
				fp := hex.EncodeToString(h.Sum(nil))[:32]
				if seen[fp] {
					continue
				}
				seen[fp] = true
				res.PartialFingerprints = map[string]string{"avcheckDiagnostic/v1": fp}
				run.Results = append(run.Results, res)
			}
		}
	}
	if loadFailed {
		failures = append(failures, report.SARIFNotification{
			Level:   "error",
			Message: report.SARIFText{Text: "some packages could not be loaded or do not build; avcheck printed their errors on standard error"},
		})
	}
	run.Invocations = []report.SARIFInvocation{{ExecutionSuccessful: len(failures) == 0, ToolExecutionNotifications: failures}}
	return &report.SARIFLog{Schema: report.SARIFSchemaURI, Version: "2.1.0", Runs: []report.SARIFRun{run}}
}

func locString(l report.SARIFLocation) string {
	if l.PhysicalLocation == nil {
		return ""
	}
	s := l.PhysicalLocation.ArtifactLocation.URI
	if r := l.PhysicalLocation.Region; r != nil {
		s += fmt.Sprintf(":%d:%d", r.StartLine, r.StartColumn)
	}
	return s
}

// analyzerRule describes the rule of an analyzer's category of finding
// from the analyzer's documentation.
func analyzerRule(id, analyzer, doc string) report.SARIFRule {
	title, rest, _ := strings.Cut(doc, "\n")
	title = strings.TrimPrefix(title, analyzer+": ")
	full := strings.TrimSpace(title + "\n" + rest)
	if full == "" {
		full = analyzer
	}
	if title == "" {
		title = analyzer
	}
	return report.SARIFRule{
		ID:                   id,
		ShortDescription:     report.SARIFText{Text: title},
		FullDescription:      report.SARIFText{Text: full},
		Help:                 report.SARIFText{Text: full + "\n\nRun 'avcheck help " + analyzer + "' for the analyzer's documentation."},
		HelpURI:              report.InformationURI + "#analyzers",
		DefaultConfiguration: &report.SARIFConfiguration{Level: "warning"},
		Properties: map[string]any{
			"tags":             []string{"concurrency", "atomicity"},
			"precision":        "medium",
			"problem.severity": "warning",
		},
	}
}

// parsePosn splits "file:line:col" (or "file:line", or "-") into a site;
// the file name may itself hold colons.
func parsePosn(posn string) trace.Site {
	var s trace.Site
	rest := posn
	nums := []int{}
	for i := 0; i < 2; i++ {
		j := strings.LastIndexByte(rest, ':')
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(rest[j+1:])
		if err != nil {
			break
		}
		nums = append(nums, n)
		rest = rest[:j]
	}
	switch len(nums) {
	case 2:
		s.Line, s.Col = nums[1], nums[0]
	case 1:
		s.Line = nums[0]
	}
	if rest != "-" {
		s.File = rest
	}
	return s
}

// vetOutput is the standalone suite's output mode.
type vetOutput int

const (
	outputText vetOutput = iota
	outputJSON
	outputSARIF
)

// outputMode finds -json and -sarif among the flags (which end at the
// first argument that is neither a flag nor a flag's value, or at "--")
// and returns the arguments for the multichecker: -sarif is avcheck's
// own, and becomes -json, converted afterwards.
func outputMode(args []string) (mode vetOutput, child []string, err error) {
	var asJSON, asSARIF bool
	child = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			child = append(child, args[i:]...)
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		on := true
		if hasVal {
			b, perr := strconv.ParseBool(val)
			if perr != nil && (name == "json" || name == "sarif") {
				return 0, nil, fmt.Errorf("invalid boolean value %q for -%s", val, name)
			}
			on = b
		}
		switch name {
		case "json":
			asJSON = on
		case "sarif":
			asSARIF = on
			continue
		}
		child = append(child, a)
		if !hasVal && takesValue(name) && i+1 < len(args) {
			i++
			child = append(child, args[i])
		}
	}
	switch {
	case asJSON && asSARIF:
		return 0, nil, fmt.Errorf("-json and -sarif cannot be used together")
	case asSARIF:
		return outputSARIF, append([]string{"-json"}, child...), nil
	case asJSON:
		return outputJSON, child, nil
	}
	return outputText, child, nil
}

// takesValue reports whether the multichecker's flag name, written
// without "=", takes the next argument as its value: the driver's
// non-boolean flags, and the analyzers' ("regions.maxd").
func takesValue(name string) bool {
	switch name {
	case "c", "tags", "debug", "cpuprofile", "memprofile", "trace":
		return true
	}
	analyzer, flagName, ok := strings.Cut(name, ".")
	if !ok {
		return false
	}
	for _, a := range analyzers() {
		if a.Name != analyzer {
			continue
		}
		f := a.Flags.Lookup(flagName)
		if f == nil {
			return false
		}
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		return !ok || !b.IsBoolFlag()
	}
	return false
}

// writeVetOutput writes the child's JSON tree in the mode asked for and
// returns the exit code: 1 if an analyzer failed or the child did, 3 if
// there are diagnostics, otherwise 0. (The multichecker itself exits 0
// with -json whatever it found, as go vet -json does.)
func writeVetOutput(w io.Writer, mode vetOutput, data []byte, childCode int) (int, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		if mode == outputSARIF {
			data = []byte("{}")
		} else {
			return childCode, nil
		}
	}
	tree, diags, errs, err := normalizeVetJSON(data)
	if err != nil {
		return exitError, fmt.Errorf("reading the analysis's JSON output: %w", err)
	}
	switch mode {
	case outputSARIF:
		err = report.WriteSARIF(w, tree.sarif(analyzers(), sarifOptions(workDir()), childCode != 0))
	default:
		err = tree.print(w)
	}
	if err != nil {
		return exitError, err
	}
	switch {
	case childCode != 0 || errs > 0:
		return exitError, nil
	case diags > 0:
		return exitFindings, nil
	}
	return exitClean, nil
}
