package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// avcheck test records every package matched, one line per package, go
// test's "no test files" line for a package without tests, and a summary.
func TestTestPackages(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := testMain(context.Background(), []string{"-p", "1",
		filepath.Join(root, "testdata/corpus/getset"), filepath.Join(root, "testdata/corpus/internal/...")}, &stdout, &stderr)
	out := stdout.String()
	if code != exitFindings {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFindings, out, stderr.String())
	}
	for _, want := range []string{
		"PASS\n",
		"getset/config.go:26:9: s.cfg:",
		"av  \tgithub.com/avcheck/avcheck/testdata/corpus/getset\t",
		"\t1 finding\n",
		"?   \tgithub.com/avcheck/avcheck/testdata/corpus/internal/turn\t[no test files]\n",
		"avcheck test: 1 package recorded, 1 package with findings (1 finding), 0 packages not recorded\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not hold %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "-avreport.report=") {
		t.Errorf("the output names a temporary report:\n%s", out)
	}
}

func TestTestUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"-h"}, exitClean, "usage: avcheck test [flags] [packages]"},
		{[]string{"-bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"-p", "0"}, exitUsage, "-p 0: want at least 1"},
		{[]string{"-recorder", "gdb"}, exitUsage, `-recorder "gdb": want instrument or delve`},
		{[]string{"./no/such/dir"}, exitError, "avcheck test:"},
	} {
		var stdout, stderr bytes.Buffer
		code := testMain(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.says) {
			t.Errorf("avcheck test %v: exit %d, output:\n%s%s\nwant exit %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.says)
		}
	}
}
