// Package analyzerdoc extracts an analyzer's documentation from the
// "# Analyzer NAME" section of its package's doc.go, so that the text in
// go doc and in "avcheck help NAME" is written once.
package analyzerdoc

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
)

// Extract returns the "# Analyzer name" section of the package comment in
// the Go source content, without its heading. It panics if the section is
// missing: that is a mistake in avcheck itself, caught by every test.
func Extract(content, name string) string {
	doc, err := extract(content, name)
	if err != nil {
		panic(err)
	}
	return doc
}

func extract(content, name string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", content, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", fmt.Errorf("analyzerdoc: %w", err)
	}
	if f.Doc == nil {
		return "", fmt.Errorf("analyzerdoc: doc.go has no package comment")
	}
	text := f.Doc.Text()
	heading := "# Analyzer " + name
	_, rest, ok := strings.Cut(text, heading+"\n")
	if !ok {
		return "", fmt.Errorf("analyzerdoc: doc.go has no %q section", heading)
	}
	if i := strings.Index(rest, "\n# "); i >= 0 {
		rest = rest[:i]
	}
	// The section opens with "name: title"; the Doc opens with the title.
	title, ok := strings.CutPrefix(strings.TrimSpace(rest), name+": ")
	if !ok {
		return "", fmt.Errorf("analyzerdoc: the %q section must begin with %q", heading, name+": ")
	}
	return strings.TrimSpace(title), nil
}
