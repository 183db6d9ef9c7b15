// Package plugin is avcheck's golangci-lint module plugin: importing it
// registers the linter "avcheck", which runs the static suite (the
// analyzers of internal/suite) inside a custom golangci-lint binary.
//
// The binary is built from a .custom-gcl.yml that names this package
// (golangci-lint custom, or scripts/build-golangci-lint where only the Go
// module proxy is reachable) and enabled in .golangci.yml under
// linters.settings.custom.avcheck with type "module"; docs/golangci holds
// examples of both. The settings are described by Settings.
package plugin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/avcheck/avcheck/analyzers/avreport"
	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/internal/suite"
	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"
)

// Name is the linter's name in golangci-lint's configuration and output.
const Name = "avcheck"

// The analyzers and flags the settings map to.
const (
	regionsName   = "regions"
	guardedbyName = "guardedby"
	avreportName  = "avreport"
)

func init() {
	register.Plugin(Name, New)
}

// Plugin is the avcheck linter of one golangci-lint run.
type Plugin struct {
	settings Settings
	// run are the analyzers the settings select, in the suite's order.
	run []*analysis.Analyzer
	// all is the whole suite, whose flags the settings set.
	all []*analysis.Analyzer
	// reportHash is the hex SHA-256 of the dynamic report's content, ""
	// when there is no report or the suite has no avreport analyzer.
	reportHash string
}

// New is the plugin's constructor, which golangci-lint calls with the raw
// settings. It decodes and checks them (see DecodeSettings) and selects the
// analyzers.
//
// golangci-lint caches each package's issues under a key made of its
// version, the package's files and dependencies, the analyzers' names and
// linters.settings; the analyzers' flags, their code and the files they
// read are not part of it. So a new dynamic report at the same path would
// give the previous report's cached findings, and so would a binary
// rebuilt from a changed avcheck checkout: the version golangci-lint
// custom gives it hashes only the checkout's top-level files. golangci-lint
// builds its linters before it computes the key, from the same settings
// map it hashes, so New records in that map the report's content hash
// ("report-sha256") and the running binary's ("binary-sha256"), and either
// change changes the key.
func New(conf any) (register.LinterPlugin, error) {
	s, err := DecodeSettings(conf)
	if err != nil {
		return nil, err
	}
	all := suite.Analyzers()
	run, err := selectAnalyzers(all, s)
	if err != nil {
		return nil, err
	}
	p := &Plugin{settings: s, run: run, all: all}
	if find(all, avreportName) != nil {
		if err := p.hashReport(); err != nil {
			return nil, err
		}
	}
	if m, ok := conf.(map[string]any); ok {
		if find(all, avreportName) != nil {
			m[reportHashKey] = p.reportHash
		}
		// Without it the cache only risks being stale; no error.
		if h, err := binaryHash(); err == nil {
			m[binaryHashKey] = h
		}
	}
	return p, nil
}

// binaryHash returns the hex SHA-256 of the running executable.
func binaryHash() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// GetLoadMode says that the suite needs type information (and so
// golangci-lint loads packages as go vet does).
func (p *Plugin) GetLoadMode() string { return register.LoadModeTypesInfo }

// BuildAnalyzers sets the analyzers' flags from the settings and returns
// the selected analyzers. The helper analyzers are not in the list: they
// run as the others' prerequisites.
func (p *Plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	if v := p.settings.MaxD; v != nil {
		if err := setFlag(p.all, regionsName, "maxd", strconv.Itoa(*v)); err != nil {
			return nil, err
		}
	}
	if v := p.settings.GuardedbyThreshold; v != nil {
		if err := setFlag(p.all, guardedbyName, "threshold", strconv.FormatFloat(*v, 'g', -1, 64)); err != nil {
			return nil, err
		}
	}
	if v := p.settings.Report; v != nil && find(p.all, avreportName) != nil {
		// As given: avreport takes a relative path from the module root
		// of each package it analyses.
		if err := setFlag(p.all, avreportName, "report", *v); err != nil {
			return nil, err
		}
	}
	if p.reportHash != "" {
		if err := setFlag(p.all, avreportName, "hash", p.reportHash); err != nil {
			return nil, err
		}
	}
	return slices.Clone(p.run), nil
}

// helpers returns the names of the suite's helper analyzers: those another
// analyzer of the suite requires. They report nothing themselves.
func helpers(all []*analysis.Analyzer) map[string]bool {
	h := map[string]bool{}
	for _, a := range all {
		for _, r := range a.Requires {
			if find(all, r.Name) != nil {
				h[r.Name] = true
			}
		}
	}
	return h
}

// selectAnalyzers returns the analyzers that report, less those the
// settings disable or do not enable.
func selectAnalyzers(all []*analysis.Analyzer, s Settings) ([]*analysis.Analyzer, error) {
	help := helpers(all)
	var reporters []string
	for _, a := range all {
		if !help[a.Name] {
			reporters = append(reporters, a.Name)
		}
	}
	check := func(setting string, names []string) error {
		for _, n := range names {
			switch {
			case help[n]:
				return fmt.Errorf("avcheck: setting %q: %q is a helper analyzer that reports nothing; the analyzers that report are %s", setting, n, strings.Join(reporters, ", "))
			case !slices.Contains(reporters, n):
				return fmt.Errorf("avcheck: setting %q: unknown analyzer %q (the analyzers: %s)", setting, n, strings.Join(reporters, ", "))
			}
		}
		return nil
	}
	if err := check("enable", s.Enable); err != nil {
		return nil, err
	}
	if err := check("disable", s.Disable); err != nil {
		return nil, err
	}
	for _, n := range s.Enable {
		if slices.Contains(s.Disable, n) {
			return nil, fmt.Errorf("avcheck: analyzer %q is both enabled and disabled", n)
		}
	}
	var run []*analysis.Analyzer
	for _, a := range all {
		if help[a.Name] || slices.Contains(s.Disable, a.Name) {
			continue
		}
		if len(s.Enable) > 0 && !slices.Contains(s.Enable, a.Name) {
			continue
		}
		run = append(run, a)
	}
	if len(run) == 0 {
		return nil, errors.New("avcheck: the settings disable every analyzer; disable the avcheck linter instead")
	}
	return run, nil
}

// hashReport hashes the dynamic report's content. A relative path, and the
// default, are taken from the working directory's module root, where
// golangci-lint runs as a rule (avreport takes them from the module root
// of each package it analyses); a report that does not exist has no hash.
func (p *Plugin) hashReport() error {
	path := avreport.DefaultReport
	if p.settings.Report != nil {
		path = *p.settings.Report
	}
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("avcheck: %w", err)
		}
		// Outside any module, from the working directory.
		root := avreport.ModuleRoot(wd)
		if root == "" {
			root = wd
		}
		path = filepath.Join(root, path)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("avcheck: setting \"report\": %w", err)
	}
	p.reportHash = report.Hash(data)
	return nil
}

func find(all []*analysis.Analyzer, name string) *analysis.Analyzer {
	for _, a := range all {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// setFlag sets the flag of the named analyzer of the suite.
func setFlag(all []*analysis.Analyzer, analyzer, flag, value string) error {
	a := find(all, analyzer)
	if a == nil {
		return fmt.Errorf("avcheck: the suite has no %s analyzer, whose -%s a setting sets", analyzer, flag)
	}
	if err := a.Flags.Set(flag, value); err != nil {
		return fmt.Errorf("avcheck: setting -%s.%s=%s: %w", analyzer, flag, value, err)
	}
	return nil
}
