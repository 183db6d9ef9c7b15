package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/internal/suite"
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"
)

func ptr[T any](v T) *T { return &v }

// settingsOf gives the settings as golangci-lint passes them: decoded
// into maps, lists and scalars (golangci-lint decodes YAML; JSON is YAML's
// subset). "" is no settings at all.
func settingsOf(t *testing.T, src string) any {
	t.Helper()
	if src == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(src), &v); err != nil {
		t.Fatalf("settings %s: %v", src, err)
	}
	return v
}

func TestDecodeSettings(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       Settings
	}{
		{"none", ``, Settings{}},
		{"empty map", `{}`, Settings{}},
		{"all", `{
	"enable": ["splitlock", "guardedby"],
	"disable": ["atomicact"],
	"maxd": 3,
	"guardedby-threshold": 0.8,
	"report": "out/report.json"
}`, Settings{
			Enable:             []string{"splitlock", "guardedby"},
			Disable:            []string{"atomicact"},
			MaxD:               ptr(3),
			GuardedbyThreshold: ptr(0.8),
			Report:             ptr("out/report.json"),
		}},
		{"threshold written as an integer", `{"guardedby-threshold": 1}`, Settings{GuardedbyThreshold: ptr(1.0)}},
		{"maxd zero", `{"maxd": 0}`, Settings{MaxD: ptr(0)}},
		{"null value is unset", `{"maxd": null}`, Settings{}},
		{"the plugin's own hash keys", `{"report-sha256": "abc", "binary-sha256": "def"}`, Settings{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeSettings(settingsOf(t, tc.yaml))
			if err != nil {
				t.Fatalf("DecodeSettings: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DecodeSettings = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeSettingsErrors(t *testing.T) {
	const known = "(known: enable, disable, maxd, guardedby-threshold, report)"
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown key", `{"threshold": 0.8}`, `avcheck: unknown setting "threshold" ` + known},
		{"unknown keys", `{"threshold": 0.5, "enabled": ["splitlock"], "maxd": 2}`, `avcheck: unknown settings "enabled", "threshold" ` + known},
		{"not a map", `["splitlock"]`, "avcheck: settings: want a map of settings (enable, disable, maxd, guardedby-threshold, report), got a list"},
		{"maxd a string", `{"maxd": "five"}`, `avcheck: setting "maxd" must be an integer, got the string "five"`},
		{"maxd a fraction", `{"maxd": 2.5}`, `avcheck: setting "maxd" must be an integer, got the number 2.5`},
		{"maxd negative", `{"maxd": -1}`, `avcheck: setting "maxd" must be 0 or more, got -1`},
		{"threshold a string", `{"guardedby-threshold": "high"}`, `avcheck: setting "guardedby-threshold" must be a number, got the string "high"`},
		{"threshold above 1", `{"guardedby-threshold": 65}`, `avcheck: setting "guardedby-threshold" must be between 0 and 1, got 65`},
		{"enable a string", `{"enable": "splitlock"}`, `avcheck: setting "enable" must be a list of analyzer names, got the string "splitlock"`},
		{"disable of numbers", `{"disable": [1]}`, `avcheck: setting "disable" must be a list of analyzer names, got a list`},
		{"report a boolean", `{"report": true}`, `avcheck: setting "report" must be a string, got the boolean true`},
		{"report empty", `{"report": ""}`, `avcheck: setting "report" must be a file path, got an empty string`},
		{"first of two mistakes in the documented order", `{"report": 1, "maxd": "x"}`, `avcheck: setting "maxd" must be an integer, got the string "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeSettings(settingsOf(t, tc.yaml))
			if err == nil {
				t.Fatalf("DecodeSettings = %+v, want error %q", got, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("DecodeSettings error:\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func names(as []*analysis.Analyzer) []string {
	var n []string
	for _, a := range as {
		n = append(n, a.Name)
	}
	return n
}

// reporters are the suite's analyzers that report, in its order.
func reporters() []string {
	var r []string
	for _, a := range suite.Analyzers() {
		if !helpers(suite.Analyzers())[a.Name] {
			r = append(r, a.Name)
		}
	}
	return r
}

func TestHelpers(t *testing.T) {
	got := helpers(suite.Analyzers())
	want := map[string]bool{"annotation": true, "regions": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("helpers = %v, want %v", got, want)
	}
}

func TestSelectAnalyzers(t *testing.T) {
	all := reporters()
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"default: every analyzer that reports", ``, all},
		{"enable one", `{"enable": ["guardedby"]}`, []string{"guardedby"}},
		{"enable in another order keeps the suite's", `{"enable": ["guardedby", "splitlock"]}`, []string{"splitlock", "guardedby"}},
		{"disable one", `{"disable": ["atomicact"]}`, slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == "atomicact" })},
		{"enable and disable", `{"enable": ["splitlock", "atomicact"], "disable": ["guardedby"]}`, []string{"splitlock", "atomicact"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(settingsOf(t, tc.yaml))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			as, err := p.BuildAnalyzers()
			if err != nil {
				t.Fatalf("BuildAnalyzers: %v", err)
			}
			if got := names(as); !slices.Equal(got, tc.want) {
				t.Errorf("analyzers = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSelectAnalyzersErrors(t *testing.T) {
	list := "splitlock, atomicact, guardedby"
	if r := reporters(); slices.Contains(r, avreportName) {
		list += ", avreport"
	}
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown in enable", `{"enable": ["splitlocks"]}`, `avcheck: setting "enable": unknown analyzer "splitlocks" (the analyzers: ` + list + `)`},
		{"unknown in disable", `{"disable": ["copylocks"]}`, `avcheck: setting "disable": unknown analyzer "copylocks" (the analyzers: ` + list + `)`},
		{"helper", `{"disable": ["regions"]}`, `avcheck: setting "disable": "regions" is a helper analyzer that reports nothing; the analyzers that report are ` + list},
		{"both", `{"enable": ["splitlock", "atomicact"], "disable": ["atomicact"]}`, `avcheck: analyzer "atomicact" is both enabled and disabled`},
		{"none left", `{"disable": ["` + strings.ReplaceAll(list, ", ", `", "`) + `"]}`, `avcheck: the settings disable every analyzer; disable the avcheck linter instead`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(settingsOf(t, tc.yaml))
			if err == nil {
				t.Fatalf("New succeeded, want error %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("New error:\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

// TestFlags checks that the settings reach the analyzers' flags, and that
// unset ones leave the defaults.
func TestFlags(t *testing.T) {
	flag := func(analyzer, name string) string {
		a := find(suite.Analyzers(), analyzer)
		if a == nil {
			t.Fatalf("no analyzer %s", analyzer)
		}
		return a.Flags.Lookup(name).Value.String()
	}
	defMaxD, defThreshold := flag(regionsName, "maxd"), flag(guardedbyName, "threshold")
	t.Cleanup(func() {
		if err := find(suite.Analyzers(), regionsName).Flags.Set("maxd", defMaxD); err != nil {
			t.Error(err)
		}
		if err := find(suite.Analyzers(), guardedbyName).Flags.Set("threshold", defThreshold); err != nil {
			t.Error(err)
		}
	})

	p, err := New(settingsOf(t, `{"enable": ["splitlock"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BuildAnalyzers(); err != nil {
		t.Fatal(err)
	}
	if got, got2 := flag(regionsName, "maxd"), flag(guardedbyName, "threshold"); got != defMaxD || got2 != defThreshold {
		t.Errorf("without settings: maxd %s, threshold %s; want the defaults %s, %s", got, got2, defMaxD, defThreshold)
	}

	p, err = New(settingsOf(t, `{"maxd": 9, "guardedby-threshold": 0.9}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BuildAnalyzers(); err != nil {
		t.Fatal(err)
	}
	if got := flag(regionsName, "maxd"); got != "9" {
		t.Errorf("regions -maxd = %s, want 9", got)
	}
	if got := flag(guardedbyName, "threshold"); got != "0.9" {
		t.Errorf("guardedby -threshold = %s, want 0.9", got)
	}
}

// TestReport checks the dynamic report's settings: the path and content
// hash reach avreport's flags, and the hash is recorded in the settings map
// golangci-lint hashes into its cache key. Without avreport in the suite,
// the report setting is accepted and nothing is recorded.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := map[string]any{"report": report}
	p, err := New(conf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.BuildAnalyzers(); err != nil {
		t.Fatal(err)
	}
	av := find(suite.Analyzers(), avreportName)
	if av == nil {
		if _, ok := conf[reportHashKey]; ok {
			t.Errorf("without avreport, New recorded a report hash: %v", conf)
		}
		t.Skip("the suite has no avreport analyzer")
	}
	// sha256 of "{}\n".
	const sum = "ca3d163bab055381827226140568f3bef7eaac187cebd76878e0b63e9e442356"
	if got := conf[reportHashKey]; got != sum {
		t.Errorf("settings[%q] = %v, want %s", reportHashKey, got, sum)
	}
	if got := av.Flags.Lookup("report").Value.String(); got != report {
		t.Errorf("avreport -report = %s, want %s", got, report)
	}
	if got := av.Flags.Lookup("hash").Value.String(); got != sum {
		t.Errorf("avreport -hash = %s, want %s", got, sum)
	}
	// The map, hash included, decodes again: golangci-lint may build the
	// linter more than once from it.
	if _, err := New(conf); err != nil {
		t.Errorf("New of its own output: %v", err)
	}
}

func TestRegistered(t *testing.T) {
	newPlugin, err := register.GetPlugin(Name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.GetLoadMode(); got != register.LoadModeTypesInfo {
		t.Errorf("GetLoadMode = %q, want %q", got, register.LoadModeTypesInfo)
	}
}

// TestBinaryHash checks that New records the running binary's hash in the
// settings map, which golangci-lint hashes into its cache key.
func TestBinaryHash(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	conf := map[string]any{"maxd": 5}
	if _, err := New(conf); err != nil {
		t.Fatal(err)
	}
	if got, want := conf[binaryHashKey], hex.EncodeToString(sum[:]); got != want {
		t.Errorf("settings[%q] = %v, want %s", binaryHashKey, got, want)
	}
}
