// Package diag is the one way avcheck's analyzers report a finding, so
// that positions, related information and suppression are uniform.
package diag

import (
	"fmt"
	"go/token"

	"golang.org/x/tools/go/analysis"
)

// Ignorer says whether an //avcheck:ignore annotation covers a position.
type Ignorer interface {
	Ignored(pos token.Pos) bool
}

// Related is another position involved in a finding.
type Related struct {
	Pos     token.Pos
	Message string
}

// Report reports a finding at pos with the given category and related
// positions, unless ign says an //avcheck:ignore covers pos. Related
// positions that are not valid are dropped rather than shown at line 0.
func Report(pass *analysis.Pass, ign Ignorer, category string, pos token.Pos, related []Related, format string, args ...any) {
	if ign != nil && ign.Ignored(pos) {
		return
	}
	d := analysis.Diagnostic{
		Pos:      pos,
		Category: category,
		Message:  fmt.Sprintf(format, args...),
	}
	for _, r := range related {
		if r.Pos.IsValid() {
			d.Related = append(d.Related, analysis.RelatedInformation{Pos: r.Pos, Message: r.Message})
		}
	}
	pass.Report(d)
}
