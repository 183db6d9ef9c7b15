package annotation_test

import (
	"go/token"
	"sort"
	"strings"
	"testing"

	"github.com/avcheck/avcheck/analyzers/annotation"
	"golang.org/x/tools/go/analysis/analysistest"
)

func TestAnnotation(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), annotation.Analyzer, "ann")
	set := results[0].Result.(*annotation.Set)
	fset := results[0].Pass.Fset
	line := func(p token.Pos) int { return fset.Position(p).Line }

	var funcs []string
	for fn := range set.AtomicFuncs {
		funcs = append(funcs, fn.Name.Name)
	}
	sort.Strings(funcs)
	if got := strings.Join(funcs, " "); got != "Whole" {
		t.Errorf("atomic functions = %q, want %q", got, "Whole")
	}
	var blocks []int
	for b := range set.AtomicBlocks {
		blocks = append(blocks, line(b.Lbrace))
	}
	sort.Ints(blocks)
	if len(blocks) != 2 || blocks[0] != 10 || blocks[1] != 12 {
		t.Errorf("atomic blocks at lines %v, want [10 12]", blocks)
	}
	var guards []string
	for v, lock := range set.Guards {
		guards = append(guards, v.Name()+":"+lock.Name())
	}
	sort.Strings(guards)
	if got, want := strings.Join(guards, " "), "a:mu b:mu f:RWMutex g:mu"; got != want {
		t.Errorf("guards = %q, want %q", got, want)
	}

	// Ignored: the whole of Ignored, the line of the trailing
	// annotation and the one after it, and the whole of Racy
	// (//go:norace); nothing else.
	file := results[0].Pass.Files[0]
	tf := fset.File(file.Pos())
	ignored := map[int]bool{}
	for l := 1; l <= tf.LineCount(); l++ {
		if set.Ignored(tf.LineStart(l)) {
			ignored[l] = true
		}
	}
	for _, l := range []int{55, 58, 59, 65, 66, 67} {
		if !ignored[l] {
			t.Errorf("line %d is not ignored", l)
		}
		delete(ignored, l)
	}
	if len(ignored) > 0 {
		t.Errorf("lines ignored that should not be: %v", ignored)
	}
}
