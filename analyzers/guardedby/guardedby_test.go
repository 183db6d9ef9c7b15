package guardedby_test

import (
	"testing"

	"github.com/avcheck/avcheck/analyzers/guardedby"
	"golang.org/x/tools/go/analysis/analysistest"
)

func TestGuardedBy(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), guardedby.Analyzer, "guard", "guarduse", "handoff", "owner", "escape", "callback", "generic", "either", "ctor", "condlock", "starter")
}
