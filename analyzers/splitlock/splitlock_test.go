package splitlock_test

import (
	"testing"

	"github.com/avcheck/avcheck/analyzers/splitlock"
	"golang.org/x/tools/go/analysis/analysistest"
)

func TestSplitLock(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), splitlock.Analyzer, "split", "lib", "use", "startup", "monotone", "loops")
}
