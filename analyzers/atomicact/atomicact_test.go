package atomicact_test

import (
	"testing"

	"github.com/avcheck/avcheck/analyzers/atomicact"
	"golang.org/x/tools/go/analysis/analysistest"
)

func TestAtomicAct(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), atomicact.Analyzer, "atom", "atomuse", "publish", "reset", "window")
}
