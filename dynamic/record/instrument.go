package record

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/scanner"
	"go/token"
	"go/types"
	"go/version"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/avcheck/avcheck/dynamic/record/avrt"
	"github.com/avcheck/avcheck/dynamic/trace"
	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/packages"
)

// The instrumenting recorder.
//
// Instrument rewrites the files of the packages under test so that each
// probe of the plan calls the recording runtime (package avrt), and
// writes an overlay (go build -overlay) that compiles the rewritten
// copies in place of the files, as go test -cover does; the user's tree is
// never written. The runtime is a module of its own, avcheck.invalid/avrt,
// written from the copy embedded in avcheck into the cache (cache.go),
// and the overlay gives the main module's go.mod a require and a replace
// of it. (A package added to the main module through the overlay alone
// would do without the go.mod, but the go command does not assemble the
// runtime's assembly from a directory that exists only in the overlay.)
//
// The rewriting inserts text at exact positions and changes no line: what
// it inserts on a line stays on it, followed by a /*line*/ comment that
// gives the next token its own column back, so that the compiler's
// messages and the binary's positions are the user's.
//
// What is probed, and where:
//   - the plan's accesses, before the statement of their line, reads
//     before writes (as the Delve recorder records a line when it is
//     reached, before it runs); the address is evaluated there, so an
//     access is probed only if its expression has no call or receive and
//     names no variable the statement declares;
//   - the sync package's Mutex, RWMutex, WaitGroup, Cond and Once methods
//     called on a variable (not through an interface), replaced by the
//     runtime's wrappers;
//   - sync/atomic calls, wrapped: a load or read-modify-write recorded
//     after it returned, a store before it;
//   - channel makes, sends, receives, ranges over a channel, and close
//     of a channel that is not receive-only;
//   - go statements: the parent records a fork and passes a token to the
//     child, which records its start and, deferred, its end;
//   - the plan's regions: a begin before their first statement, an end
//     after their last and before each return between.
//
// Nothing outside the packages under test is rewritten; see
// docs/run.md for what that loses.

// rtModule is the module path of the recording runtime in the user's
// build, and rtName the name its rewritten files import it as.
const (
	rtModule = "avcheck.invalid/avrt"
	rtName   = "_avrt"
	// rtGoVersion is the runtime module's go line, to which an older go
	// line of the code under test, or of another module rewritten, is
	// raised: the rewritten calls of the runtime's generic functions
	// need Go 1.18, and Go 1.20 where they pass interface{} for a
	// comparable type parameter (a map whose keys are interfaces). No
	// construct changes its meaning between those and older Go.
	rtGoVersion = "1.20"
	// fileGoVersion is the version that a //go:build line gives each
	// rewritten file of a main module whose go line is older than it
	// (langVersion): the oldest a file's line can raise it to, and one
	// whose loops keep their older meaning.
	fileGoVersion = "1.21"
)

// runtimePath is the import path of the recording runtime's own source in
// this module, whose tests (avcheck's) are recorded without rewriting it.
var runtimePath = reflect.TypeOf(avrt.Event{}).PkgPath()

//go:embed avrt/*.go avrt/*.s
var rtFiles embed.FS

// rawSite is what the converter knows of a site id the rewritten code
// passes to the runtime.
type rawSite struct {
	Site  trace.Site
	Name  string        // the expression an access reaches, or a lock's name
	Obj   trace.ObjKind // the kind of the object a sync operation touches
	Flags trace.Flags
	// Value is the constant a write stores, where Flags has
	// trace.ValueConst (AccessProbe.Const).
	Value uint64
	Map   string // the map of an element access, which names its contents
	// Guard is the plan's guard of a plain read (AccessProbe.Guard),
	// from which the converter computes the range of the value read.
	Guard *Guard
	// Size is the size of what a pointer read points to
	// (trace.ValueIsAddr), 0 if not known.
	Size uint64
}

// Instrumented is the packages under test rewritten for the instrumenting
// recorder.
type Instrumented struct {
	// Overlay is the go command's -overlay file.
	Overlay string
	// Files lists the files rewritten.
	Files []string
	// Unrewritten lists the files compiled without probes, with why.
	Unrewritten []string
	// Skipped counts the probes of the plan that could not be placed
	// (their expression calls a function, or names a variable that is
	// not in scope before the statement, ...), and Probes those placed.
	Skipped, Probes int
	// NotProbed lists the probes skipped, with why.
	NotProbed []NotProbed
	// Deferred counts the sync/atomic calls of defer and go statements,
	// which are not recorded: a probe around the call would run it at
	// the statement, not when the deferred call or the goroutine runs.
	Deferred int
	// OtherModules says what of the synchronisation of other modules'
	// packages is recorded (deps.go).
	OtherModules OtherModules
	// ownOverlay is the overlay of the packages under test alone, which
	// BuildInstrumented builds if the build with the other modules
	// rewritten fails.
	ownOverlay string
	// enterIDs numbers the functions with accesses the plan does not
	// probe (Plan.Unprobed), by name, for the entry probes that tell
	// which of them the run reached (avrt.Enter); entryPlaced says, per
	// id, that a rewritten file has its probe.
	enterIDs    map[string]uint32
	entryPlaced []bool
	// tests maps the full name of each top-level test of the rewritten
	// test files (pkg.TestX) to its name (TestX).
	tests   map[string]string
	dir     string
	plan    *Plan
	sites   []rawSite
	siteIDs map[siteKey]uint32
	own     map[string]bool
	// raw maps the ids the rewritten code passes to the runtime (probe
	// ids, ids.go) to what they stand for: a site (its index in
	// sites), a region (its Plan.Regions id), an entered function (its
	// enterIDs id). claimed holds the ranges of raw ids the files took.
	raw     map[uint32]idKey
	claimed [][2]uint64
	// What the overlays are written from, to write them again without
	// a file whose rewriting did not compile (dropRewriting): the main
	// module's go.mod and its rewritten copy, the copies of the files of
	// the packages under test (replace) and of other modules' too
	// (replaceAll), and the go.mod lines that other modules' copies add
	// (deps, nil once the build goes without them).
	goMod      string
	mod, deps  []byte
	replace    map[string]string
	replaceAll map[string]string
	// fileGo is the version the rewritten files say (langVersion), ""
	// if the main module's go line is recent enough.
	fileGo string
	// cache is the directory of the cache (cache.go), "" if none.
	cache string
}

// ownFuncs returns the functions declared in the packages under test, as
// Plan.CallSites names callees.
func (in *Instrumented) ownFuncs() map[string]bool {
	if in.own != nil {
		return in.own
	}
	in.own = make(map[string]bool)
	for _, p := range in.plan.pkgs {
		for _, f := range p.Syntax {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || p.TypesInfo == nil {
					continue
				}
				if fn, ok := p.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					if rt, ok := runtimeFuncName(fn.FullName()); ok {
						in.own[withoutPackage(rt)] = true
					}
				}
			}
		}
	}
	return in.own
}

// Instrumentable reports why the instrumenting recorder cannot record
// the plan's packages, or "" if it can: they must be in the main module,
// which must not be built from a vendor directory (the runtime's module
// is not in it).
func Instrumentable(plan *Plan) string {
	for _, p := range plan.pkgs {
		if strings.HasSuffix(p.PkgPath, ".test") {
			continue
		}
		if p.Module == nil || !p.Module.Main {
			return p.PkgPath + " is not in the main module"
		}
		if _, err := os.Stat(filepath.Join(p.Module.Dir, "vendor", "modules.txt")); err == nil && !strings.Contains(os.Getenv("GOFLAGS"), "-mod=mod") {
			return "the main module is built from its vendor directory"
		}
	}
	return ""
}

// Instrument rewrites the plan's packages into dir, a temporary
// directory the caller removes; the runtime's module and the copies of
// other modules go into the cache (cache.go), which outlives it.
func Instrument(plan *Plan, dir string) (*Instrumented, error) {
	in := &Instrumented{dir: dir, plan: plan, sites: []rawSite{{}}, siteIDs: make(map[siteKey]uint32), enterIDs: make(map[string]uint32), raw: make(map[uint32]idKey)}
	for _, u := range plan.Unprobed {
		if _, ok := in.enterIDs[u.Func]; !ok && len(in.enterIDs) < avrt.MaxEntered {
			in.enterIDs[u.Func] = uint32(len(in.enterIDs))
		}
	}
	in.entryPlaced = make([]bool, len(in.enterIDs))
	for _, p := range plan.pkgs {
		if m := p.Module; m != nil && m.Main && (m.GoVersion == "" || version.Compare("go"+m.GoVersion, "go"+fileGoVersion) < 0) {
			in.fileGo = "go" + fileGoVersion
		}
	}
	var goMod string
	done := make(map[string]bool)
	replace := make(map[string]string)
	for _, p := range plan.pkgs {
		if strings.HasSuffix(p.PkgPath, ".test") {
			continue
		}
		if p.Module == nil {
			return nil, fmt.Errorf("%s is not in a module: the instrumenting recorder rewrites the packages of the main module only (use -recorder=delve)", p.PkgPath)
		}
		if p.Module.Main && p.Module.GoMod != "" {
			goMod = p.Module.GoMod
		}
		if p.PkgPath == runtimePath || p.PkgPath == runtimePath+"_test" {
			// avcheck's own tests of its runtime: probes in code that
			// runs pinned to its P would record while it is pinned.
			if why := fmt.Sprintf("the files of %s: it is the recording runtime itself", p.PkgPath); !slices.Contains(in.Unrewritten, why) {
				in.Unrewritten = append(in.Unrewritten, why)
			}
			continue
		}
		for i, f := range p.Syntax {
			if i >= len(p.CompiledGoFiles) {
				break
			}
			name := p.CompiledGoFiles[i]
			if done[name] || !strings.HasSuffix(name, ".go") || importsC(f) {
				continue
			}
			done[name] = true
			src, err := os.ReadFile(name)
			if err != nil {
				return nil, err
			}
			w := newFileRewriter(in, p, f, name, src)
			if w == nil {
				continue
			}
			out, changed, err := w.rewrite()
			if err != nil {
				in.Unrewritten = append(in.Unrewritten, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			if !changed {
				continue
			}
			if testBreakRewriting != nil {
				out = testBreakRewriting(name, out)
			}
			for _, id := range w.entries {
				in.entryPlaced[id] = true
			}
			copyPath := filepath.Join(dir, strconv.Itoa(len(in.Files))+"_"+filepath.Base(name))
			if err := os.WriteFile(copyPath, out, 0o600); err != nil {
				return nil, err
			}
			replace[name] = copyPath
			in.Files = append(in.Files, name)
		}
	}
	if goMod == "" {
		return nil, fmt.Errorf("no main module's go.mod: the instrumenting recorder rewrites the packages of the main module only (use -recorder=delve)")
	}
	in.cache = cacheDir()
	rtDir, err := runtimeDir(dir, in.cache)
	if err != nil {
		return nil, err
	}
	mod, err := os.ReadFile(goMod)
	if err != nil {
		return nil, err
	}
	// The go line stays: the rewritten files of an older module say
	// their own version (langVersion).
	mod = fmt.Appendf(slices.Clip(mod), "\nrequire %s v0.0.0\n\nreplace %s => %s\n", rtModule, rtModule, rtDir)
	in.goMod, in.mod, in.replace = goMod, mod, replace
	depDir := filepath.Join(dir, "deps")
	if err := os.Mkdir(depDir, 0o700); err != nil {
		return nil, err
	}
	in.replaceAll = maps.Clone(replace)
	deps, err := in.instrumentDeps(depDir, in.replaceAll)
	if err != nil {
		return nil, err
	}
	if len(in.OtherModules.Rewritten) > 0 {
		in.deps = []byte(deps)
	}
	return in, in.writeOverlays()
}

// testBreakRewriting, set by a test, changes a file's rewritten text
// into one that does not compile.
var testBreakRewriting func(name string, out []byte) []byte

// writeOverlays writes the overlay of the packages under test, and the
// one with other modules' copies too if they are built: Overlay is the
// one the build uses.
func (in *Instrumented) writeOverlays() error {
	own, err := writeOverlayFile(in.dir, "own", in.goMod, in.mod, in.replace)
	if err != nil {
		return err
	}
	if in.deps == nil {
		in.Overlay, in.ownOverlay = own, ""
		return nil
	}
	all, err := writeOverlayFile(in.dir, "all", in.goMod, append(slices.Clip(in.mod), in.deps...), in.replaceAll)
	in.Overlay, in.ownOverlay = all, own
	return err
}

// withoutOtherModules makes the build go without other modules' copies,
// whose rewriting did not compile (why).
func (in *Instrumented) withoutOtherModules(why string) {
	in.OtherModules.Failed = why
	in.Overlay, in.ownOverlay, in.deps = in.ownOverlay, "", nil
}

// dropRewriting makes the build compile, as they are, the files under
// test that the compiler's errors (e, of a build in dir) name: their
// rewriting did not compile, which is avcheck's fault, not the user's.
// Each goes into Unrewritten with the first error about it. It reports
// whether it dropped any.
func (in *Instrumented) dropRewriting(e *BuildError, dir string) (bool, error) {
	copies := make(map[string]string, len(in.replace))
	for name, c := range in.replace {
		copies[c] = name
	}
	var dropped []string
	for line := range strings.SplitSeq(e.Output, "\n") {
		i := strings.Index(line, ".go:")
		if i < 0 {
			continue
		}
		file := line[:i+len(".go")]
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		file = filepath.Clean(file)
		if name, ok := copies[file]; ok {
			file = name
		}
		if _, ok := in.replace[file]; !ok {
			continue
		}
		delete(in.replace, file)
		delete(in.replaceAll, file)
		in.Files = slices.DeleteFunc(in.Files, func(f string) bool { return f == file })
		in.Unrewritten = append(in.Unrewritten, fmt.Sprintf("%s: compiled as it is: its rewriting did not compile (an error of avcheck's, please report it): %s", file, strings.TrimSpace(line[i+len(".go:"):])))
		dropped = append(dropped, file)
	}
	if len(dropped) == 0 {
		return false, nil
	}
	return true, in.writeOverlays()
}

// writeOverlayFile writes an overlay that compiles the files of replace
// from their copies and reads the main module's go.mod (goMod) as mod,
// into dir, and returns its path. name tells the files apart.
func writeOverlayFile(dir, name, goMod string, mod []byte, replace map[string]string) (string, error) {
	modCopy := filepath.Join(dir, name+".go.mod")
	if err := os.WriteFile(modCopy, mod, 0o600); err != nil {
		return "", err
	}
	files := maps.Clone(replace)
	files[goMod] = modCopy
	data, err := json.Marshal(struct{ Replace map[string]string }{files})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, name+".overlay.json")
	return overlay, os.WriteFile(overlay, data, 0o600)
}

// NotProbed is an access of the plan that the rewriting could not probe.
type NotProbed struct {
	Spot
	Expr  string
	Write bool
	Why   string
}

// OtherModules says what of the synchronisation of other modules'
// packages the instrumenting recorder records.
type OtherModules struct {
	// Rewritten lists the modules whose packages' synchronisation is
	// recorded, by path.
	Rewritten []string
	// Left lists what is not, with why: a module the main module
	// replaces by another module, a file the rewriting failed on.
	Left []string
	// Failed is the first line of the build's error when the build
	// with the other modules rewritten failed, and the packages under
	// test were built without them.
	Failed string
}

// writeRuntime writes the runtime's module into dir.
func writeRuntime(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	names, err := fs.Glob(rtFiles, "avrt/*")
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		data, err := rtFiles.ReadFile(n)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), data, 0o600); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+rtModule+"\n\ngo "+rtGoVersion+"\n"), 0o600)
}

func importsC(f *ast.File) bool {
	for _, s := range f.Imports {
		if s.Path.Value == `"C"` {
			return true
		}
	}
	return false
}

// site returns the id of a site, declaring it on first use; name and kind
// describe the object of its events.
func (in *Instrumented) site(s trace.Site, name string, obj trace.ObjKind, flags trace.Flags) uint32 {
	k := siteKey{s, obj, name}
	if id, ok := in.siteIDs[k]; ok {
		return id
	}
	id := uint32(len(in.sites))
	in.sites = append(in.sites, rawSite{Site: s, Name: name, Obj: obj, Flags: flags})
	in.siteIDs[k] = id
	return id
}

// siteKey tells sites apart: one position may hold operations on
// objects of several kinds, or accesses of several expressions (c.m and
// c.m[k]).
type siteKey struct {
	trace.Site
	obj  trace.ObjKind
	name string
}

// An edit replaces the bytes [off, end) of the source with text (an
// insertion when end == off). Edits at one offset apply in the order of
// their prio.
type edit struct {
	off, end int
	prio     int
	text     string
}

// The priorities of insertions at one offset.
const (
	prioReadEnd = iota // the end of a read probed where it is evaluated, innermost
	prioTest           // a test's begin (avrt.TestBegin, TestGo): its goroutine's first event
	prioBegin          // a region's begin, before the accesses of its first statement
	prioProbe          // an access or sync probe before a statement
	prioFinish         // a region's end, before a return
	prioWrapEnd        // the end of an expression's wrapping, inside the code's other rewriting
	prioCode           // the rewriting of the code itself
	prioRead           // the start of a read probed where it is evaluated, innermost
	prioClose          // the end of the block around an else-if
	prioMade           // after a statement, the variables it declares being new memory
	prioAfter          // after a statement, once its last expression is closed
)

type fileRewriter struct {
	in      *Instrumented
	pkg     *packages.Package
	fset    *token.FileSet
	tf      *token.File
	file    *ast.File
	info    *types.Info
	name    string
	src     []byte
	edits   []edit
	parents map[ast.Node]ast.Node
	funcs   map[ast.Node]string // the SSA names of the file's functions
	entries []uint32            // the entry probes placed (enters)
	wrapped map[*ast.IfStmt]bool
	spans   [][2]int // ranges replaced whole, where no other edit applies
	// syncOnly rewrites the file's synchronisation only: a package of
	// another module (deps.go).
	syncOnly bool
	// captured holds the function variables that a closure captures or
	// whose address is taken, once asked (freshVars).
	captured map[*types.Var]bool
	// ids lists the probe ids the edits name, in the order they were
	// first asked for (id), and idOf indexes it.
	ids  []idKey
	idOf map[idKey]int
	// inPlace holds the reads probed where they are evaluated.
	inPlace []inPlaceRead
}

func newFileRewriter(in *Instrumented, p *packages.Package, f *ast.File, name string, src []byte) *fileRewriter {
	tf := p.Fset.File(f.Pos())
	if tf == nil || tf.Size() != len(src) || p.TypesInfo == nil {
		return nil
	}
	w := &fileRewriter{
		in: in, pkg: p, fset: p.Fset, tf: tf, file: f, info: p.TypesInfo, name: name, src: src,
		parents: make(map[ast.Node]ast.Node), funcs: make(map[ast.Node]string), wrapped: make(map[*ast.IfStmt]bool),
	}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if len(stack) > 0 {
			w.parents[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		return true
	})
	w.nameFuncs()
	return w
}

// nameFuncs names the file's functions as the plan's sites do (SSA's
// names): "pkg.F", "(*pkg.T).M", and "F$1", "F$1$2" for the literals in
// them, numbered in the order they appear.
func (w *fileRewriter) nameFuncs() {
	var lits func(n ast.Node, name string)
	lits = func(n ast.Node, name string) {
		k := 0
		ast.Inspect(n, func(m ast.Node) bool {
			if m == n {
				return true
			}
			if fl, ok := m.(*ast.FuncLit); ok {
				k++
				inner := name + "$" + strconv.Itoa(k)
				w.funcs[fl] = inner
				lits(fl.Body, inner)
				return false
			}
			return true
		})
	}
	for _, d := range w.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		fn, ok := w.info.Defs[fd.Name].(*types.Func)
		if !ok {
			continue
		}
		w.funcs[fd] = fn.FullName()
		lits(fd.Body, fn.FullName())
	}
}

// funcOf returns the name of the function n is in.
func (w *fileRewriter) funcOf(n ast.Node) string {
	for cur := n; cur != nil; cur = w.parents[cur] {
		if name, ok := w.funcs[cur]; ok {
			return name
		}
	}
	return ""
}

func (w *fileRewriter) off(p token.Pos) int { return w.tf.Offset(p) }

func (w *fileRewriter) text(n ast.Node) string {
	return string(w.src[w.off(n.Pos()):w.off(n.End())])
}

// lineDirective gives the text after it the position of p back.
func (w *fileRewriter) lineDirective(p token.Pos) string {
	pos := w.fset.PositionFor(p, false)
	return fmt.Sprintf("/*line %s:%d:%d*/", w.name, pos.Line, pos.Column)
}

func (w *fileRewriter) insert(p token.Pos, prio int, text string) {
	w.edits = append(w.edits, edit{off: w.off(p), end: w.off(p), prio: prio, text: text + w.lineDirective(p)})
}

func (w *fileRewriter) replace(from, to token.Pos, text string) {
	w.edits = append(w.edits, edit{off: w.off(from), end: w.off(to), prio: prioCode, text: text + w.lineDirective(to)})
}

// siteAt declares the site of a node.
func (w *fileRewriter) siteAt(n ast.Node, col bool, name string, obj trace.ObjKind) uint32 {
	pos := w.fset.PositionFor(n.Pos(), false)
	s := trace.Site{File: w.name, Line: pos.Line, Func: w.funcOf(n)}
	if col {
		s.Col = pos.Column
	}
	return w.in.site(s, name, obj, 0)
}

// stmtOf returns the statement before which the code that evaluates n
// can run: the innermost statement of a statement list that holds n. It
// reports false for an expression that is evaluated only sometimes when
// its statement runs (a case of a switch), or that no statement holds.
// An if statement that is an else branch comes back as it is: the caller
// wraps it in a block (before).
func (w *fileRewriter) stmtOf(n ast.Node) (ast.Stmt, bool) {
	prev := n
	for cur := n; cur != nil; prev, cur = cur, w.parents[cur] {
		switch c := cur.(type) {
		case *ast.FuncLit:
			if prev != c.Body {
				return nil, false
			}
			continue
		case *ast.CaseClause:
			if e, ok := prev.(ast.Expr); ok && slices.Contains(c.List, e) {
				return nil, false
			}
			continue
		case *ast.CommClause:
			continue
		}
		st, ok := cur.(ast.Stmt)
		if !ok {
			continue
		}
		switch p := w.parents[st].(type) {
		case *ast.BlockStmt:
			if _, clause := st.(*ast.CaseClause); !clause {
				if _, clause := st.(*ast.CommClause); !clause {
					return st, true
				}
			}
		case *ast.CaseClause:
			return st, true
		case *ast.CommClause:
			if st != p.Comm {
				return st, true
			}
		case *ast.IfStmt:
			if p.Else == st {
				return st, true
			}
		}
	}
	return nil, false
}

// before inserts text before statement st.
func (w *fileRewriter) before(st ast.Stmt, prio int, text string) {
	if ifs, ok := st.(*ast.IfStmt); ok {
		if p, ok := w.parents[ifs].(*ast.IfStmt); ok && p.Else == ifs {
			// "else if c {" becomes "else { probes; if c {...} }".
			if !w.wrapped[ifs] {
				w.wrapped[ifs] = true
				w.edits = append(w.edits, edit{off: w.off(ifs.Pos()), end: w.off(ifs.Pos()), prio: -1, text: "{ "})
				w.edits = append(w.edits, edit{off: w.off(ifs.End()), end: w.off(ifs.End()), prio: prioClose, text: " }" + w.lineDirective(ifs.End())})
			}
		}
	}
	w.insert(st.Pos(), prio, text+"; ")
}

// after inserts text after statement st.
func (w *fileRewriter) after(st ast.Stmt, text string) {
	w.edits = append(w.edits, edit{off: w.off(st.End()), end: w.off(st.End()), prio: prioAfter, text: "; " + text + w.lineDirective(st.End())})
}

// declaredIn reports whether e names a variable that st declares (and
// that is not in scope before it), or a label.
func (w *fileRewriter) declaredIn(e ast.Node, st ast.Stmt) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		if v, ok := w.info.Uses[id].(*types.Var); ok && !v.IsField() && v.Pos() >= st.Pos() && v.Pos() < st.End() {
			found = true
		}
		return true
	})
	return found
}

// onlyReads reports whether the call c runs no code: a conversion, or
// len or cap.
func (w *fileRewriter) onlyReads(c *ast.CallExpr) bool {
	if tv, ok := w.info.Types[c.Fun]; ok && tv.IsType() {
		return true
	}
	if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok {
		if b, ok := w.info.Uses[id].(*types.Builtin); ok && (b.Name() == "len" || b.Name() == "cap") {
			return true
		}
	}
	return false
}

// pure reports whether evaluating e a second time does nothing but read:
// no calls but conversions, len and cap, no receives, no literals of
// functions.
func (w *fileRewriter) pure(e ast.Expr) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if w.onlyReads(n) || w.isContextDone(n) {
				return true
			}
			ok = false
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				ok = false
			}
		case *ast.FuncLit, *ast.TypeAssertExpr, *ast.SliceExpr:
			ok = false
		}
		return ok
	})
	return ok
}

// conditional reports whether the statement st may run without
// evaluating n, or may evaluate it only after a check that makes it safe:
// n is the right operand of && or ||, or in a loop's post statement. A
// probe evaluated early, before the statement, could then panic where the
// program does not (p != nil && p.n > 0).
func (w *fileRewriter) conditional(n ast.Node, st ast.Stmt) bool {
	prev := n
	for cur := w.parents[n]; cur != nil && prev != ast.Node(st); prev, cur = cur, w.parents[cur] {
		switch c := cur.(type) {
		case *ast.BinaryExpr:
			if (c.Op == token.LAND || c.Op == token.LOR) && prev == c.Y {
				return true
			}
		case *ast.ForStmt:
			if prev == c.Post {
				return true
			}
		}
	}
	return false
}

// addressable reports whether &e compiles.
func (w *fileRewriter) addressable(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		// Not a field's name, the key of a struct literal's element.
		v, ok := w.info.Uses[e].(*types.Var)
		return ok && !v.IsField()
	case *ast.StarExpr:
		return true
	case *ast.SelectorExpr:
		sel, ok := w.info.Selections[e]
		if !ok || sel.Kind() != types.FieldVal {
			// A package's variable.
			_, isVar := w.info.Uses[e.Sel].(*types.Var)
			return !ok && isVar
		}
		if sel.Indirect() {
			return true
		}
		if _, ptr := w.info.TypeOf(e.X).Underlying().(*types.Pointer); ptr {
			return true
		}
		return w.addressable(e.X)
	case *ast.IndexExpr:
		switch t := w.info.TypeOf(e.X).Underlying().(type) {
		case *types.Slice:
			return true
		case *types.Pointer:
			return true
		case *types.Array:
			_ = t
			return w.addressable(e.X)
		}
	}
	return false
}

// rewrite returns the rewritten source, and whether anything changed.
// A construct the rewriting does not expect is an error, never a panic:
// the file is then compiled as it is, without probes.
func (w *fileRewriter) rewrite() (out []byte, changed bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, changed, err = nil, false, fmt.Errorf("internal error: %v", r)
		}
	}()
	if w.syncOnly {
		w.code()
	} else {
		w.accesses()
		w.branches()
		w.code()
		w.regions()
		w.enters()
		w.tests()
	}
	if len(w.edits) == 0 {
		return nil, false, nil
	}
	if w.in.fileGo != "" && !w.syncOnly {
		w.langVersion()
	}
	// The import, after the package clause, on its line.
	w.edits = append(w.edits, edit{off: w.off(w.file.Name.End()), end: w.off(w.file.Name.End()), prio: prioCode,
		text: "; import " + rtName + " " + strconv.Quote(rtModule) + w.lineDirective(w.file.Name.End())})
	return w.numberIDs(w.apply()), true, nil
}

// langVersion gives the file the language version that the runtime's
// generic calls need, in a main module whose go line is older (such as
// go 1.12): a //go:build line with it, which the compiler takes as the
// file's version. The go.mod's go line is not raised instead: the go
// command would then ask an old module's go.mod for the requirements of
// every module it builds, which it does not list ("updates to go.mod
// needed"). A file's own //go:build line gets the version on its line;
// otherwise the line goes before the first, with the constraint of the
// file's // +build lines, and a //line comment keeps every line of the
// file where it was. The // +build lines are emptied: a //go:build line
// overrides them, and go vet (which go test runs) refuses those that do
// not say what it says.
func (w *fileRewriter) langVersion() {
	var goBuild *ast.Comment
	var plus []constraint.Expr
	for _, cg := range w.file.Comments {
		if cg.Pos() >= w.file.Package {
			break
		}
		for _, c := range cg.List {
			switch {
			case constraint.IsGoBuild(c.Text):
				goBuild = c
			case constraint.IsPlusBuild(c.Text):
				if x, err := constraint.Parse(c.Text); err == nil {
					plus = append(plus, x)
				}
				w.edits = append(w.edits, edit{off: w.off(c.Pos()), end: w.off(c.End()), prio: prioCode, text: "//"})
			}
		}
	}
	line := "//go:build " + w.in.fileGo
	if goBuild != nil {
		expr := strings.TrimSpace(strings.TrimPrefix(goBuild.Text, "//go:build"))
		w.edits = append(w.edits, edit{off: w.off(goBuild.Pos()), end: w.off(goBuild.End()), prio: prioCode, text: line + " && (" + expr + ")"})
		return
	}
	for _, x := range plus {
		line += " && (" + x.String() + ")"
	}
	w.edits = append(w.edits, edit{off: 0, end: 0, prio: -1, text: fmt.Sprintf("%s\n\n//line %s:1:1\n", line, w.name)})
}

func (w *fileRewriter) apply() []byte {
	edits := w.edits[:0:0]
	for _, e := range w.edits {
		inside := false
		for _, s := range w.spans {
			if e.off >= s[0] && e.end <= s[1] && !(e.off == s[0] && e.end == s[1]) && e.off < s[1] {
				inside = true
			}
		}
		if !inside {
			edits = append(edits, e)
		}
	}
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].off != edits[j].off {
			return edits[i].off < edits[j].off
		}
		return edits[i].prio < edits[j].prio
	})
	var out []byte
	at := 0
	for _, e := range edits {
		if e.off < at {
			continue // overlaps an earlier replacement
		}
		out = append(out, w.src[at:e.off]...)
		out = append(out, e.text...)
		at = e.end
	}
	return append(out, w.src[at:]...)
}

// accesses places the plan's access probes of the file.
func (w *fileRewriter) accesses() {
	byStmt := make(map[ast.Stmt][]string)
	again := make(map[ast.Stmt][]string)     // a loop's condition, tested again after each iteration
	againPost := make(map[ast.Stmt][]string) // a loop's post statement, run after each iteration
	afterStmt := make(map[ast.Stmt][]string) // writes probed after their statement
	var order []ast.Stmt
	var lines []Line
	for l := range w.in.plan.Accesses {
		if l.File == w.name {
			lines = append(lines, l)
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].Line < lines[j].Line })
	for _, l := range lines {
		ps := slices.Clone(w.in.plan.Accesses[l])
		// Reads before writes, as the Delve recorder records a line.
		sort.SliceStable(ps, func(i, j int) bool {
			if ps[i].Write != ps[j].Write {
				return !ps[i].Write
			}
			return ps[i].Col < ps[j].Col
		})
		for _, p := range ps {
			if p.Atomic != "" {
				continue // the call is wrapped (code)
			}
			if p.Write && initialisingExpr(p.Expr) {
				// A composite literal's element or a call's variadic
				// argument, written as the value is built: no other
				// goroutine can see it yet (as unrecorded.go's
				// initialising tells the Delve recorder).
				continue
			}
			st, e, call, why := w.accessProbe(l.Line, p)
			if why != "" {
				w.in.Skipped++
				w.in.NotProbed = append(w.in.NotProbed, NotProbed{Spot: Spot{Line: l, Col: p.Col}, Expr: p.Expr, Write: p.Write, Why: why})
				continue
			}
			w.in.Probes++
			if st == nil {
				continue // probed where it is evaluated (placeReads)
			}
			if p.AfterCall && w.writtenAfter(st, e) || w.definesCaptured(st, e) {
				afterStmt[st] = append(afterStmt[st], call)
				continue
			}
			if byStmt[st] == nil && again[st] == nil && againPost[st] == nil {
				order = append(order, st)
			}
			// A loop's condition is tested before the first iteration
			// and after each one, its post statement after each one:
			// probed before the loop (the condition), and where an
			// iteration ends (both).
			f, loop := st.(*ast.ForStmt)
			if !loop || f.Body == nil || !inside(e, f.Post) {
				byStmt[st] = append(byStmt[st], call)
			}
			switch {
			case !loop || f.Body == nil:
			case inside(e, f.Post):
				againPost[st] = append(againPost[st], call)
			case inside(e, f.Cond):
				again[st] = append(again[st], call)
			}
		}
	}
	for _, st := range order {
		if calls := byStmt[st]; len(calls) > 0 {
			w.before(st, prioProbe, strings.Join(calls, "; "))
		}
		// The post statement runs first, then the condition.
		if calls := append(againPost[st], again[st]...); len(calls) > 0 {
			w.iterationEnds(st.(*ast.ForStmt), strings.Join(calls, "; "))
		}
	}
	for st, calls := range afterStmt {
		w.after(st, strings.Join(calls, "; "))
	}
	w.placeReads()
}

// iterationEnds inserts text where an iteration of loop f ends and its
// post statement and condition run next: at the end of its body, and
// before each continue statement that goes on with f. (A loop left by a
// break, a return or a goto tests its condition no more.)
func (w *fileRewriter) iterationEnds(f *ast.ForStmt, text string) {
	label := ""
	if l, ok := w.parents[f].(*ast.LabeledStmt); ok {
		label = l.Label.Name
	}
	var walk func(n ast.Node, inner bool)
	walk = func(n ast.Node, inner bool) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ForStmt:
				if n.Body != nil {
					walk(n.Body, true)
				}
				return false
			case *ast.RangeStmt:
				walk(n.Body, true)
				return false
			case *ast.BranchStmt:
				if n.Tok == token.CONTINUE && (n.Label == nil && !inner || n.Label != nil && n.Label.Name == label) {
					w.before(n, prioProbe, text)
				}
			}
			return true
		})
	}
	walk(f.Body, false)
	w.insert(f.Body.Rbrace, prioProbe, " "+text+"; ")
}

// definesCaptured reports whether e is a variable that the short
// variable declaration st declares, and that a closure captures or whose
// address is taken: st's write of it is probed after st, after freshVars
// records the variable as new memory.
func (w *fileRewriter) definesCaptured(st ast.Stmt, e ast.Expr) bool {
	as, ok := st.(*ast.AssignStmt)
	if !ok || as.Tok != token.DEFINE || !slices.Contains(as.Lhs, e) {
		return false
	}
	id, ok := e.(*ast.Ident)
	return ok && w.capturedDef(id)
}

// writtenAfter reports whether the write of e, which the plan marks as
// made once the call or receive of its statement returned
// (AccessProbe.AfterCall), is probed after st: e is a left operand of the
// assignment st, not one written only sometimes.
func (w *fileRewriter) writtenAfter(st ast.Stmt, e ast.Expr) bool {
	as, ok := st.(*ast.AssignStmt)
	return ok && slices.Contains(as.Lhs, e) && !w.conditional(e, st)
}

// branches places a branch probe before the statement of each line of
// the plan's conditional branches and calls that may branch on a value
// read (Plan.Conds, Plan.Calls), and at each iteration of a loop whose
// line it is: the converter counts them as the Delve recorder counts the
// lines it passes between two stops (AVFilter's br).
func (w *fileRewriter) branches() {
	lines := slices.Clone(w.in.plan.Conds[w.name])
	for _, l := range w.in.plan.Calls[w.name] {
		// A call of a function of the packages under test is not
		// counted: its own lines are (as the Delve recorder does when
		// it sees the callee's frame, plan.callLine).
		if sites := w.in.plan.CallSites[Line{w.name, l}]; len(sites) == 1 && w.in.ownFuncs()[sites[0]] {
			continue
		}
		lines = append(lines, l)
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	call := rtName + ".Branch()"
	for _, line := range lines {
		if line < 1 || line > w.tf.LineCount() {
			continue
		}
		start := w.tf.LineStart(line)
		end := token.Pos(w.tf.Base() + w.tf.Size())
		if line < w.tf.LineCount() {
			end = w.tf.LineStart(line + 1)
		}
		// The first statement that starts on the line, else the one that
		// holds the line's first token.
		var st ast.Stmt
		ast.Inspect(w.file, func(n ast.Node) bool {
			if st != nil || n == nil || n.End() <= start || n.Pos() >= end {
				return st == nil
			}
			if s, ok := n.(ast.Stmt); ok && n.Pos() >= start {
				if found, ok := w.stmtOf(s); ok && found == s {
					st = s
					return false
				}
			}
			return true
		})
		if st == nil {
			continue
		}
		// The branch is counted once its condition is evaluated, after
		// the reads (and the calls) the condition makes, as the Delve
		// recorder counts a line when its goroutine has passed it: a
		// count before them would leave them free to read anything.
		switch l := st.(type) {
		case *ast.IfStmt:
			if w.condWrapped(l.Cond) {
				continue
			}
		case *ast.SwitchStmt:
			w.clauseBranches(l.Body, call)
			continue
		case *ast.TypeSwitchStmt:
			w.clauseBranches(l.Body, call)
			continue
		}
		w.before(st, prioProbe, call)
		switch l := st.(type) {
		case *ast.ForStmt:
			if l.Cond != nil {
				w.insert(l.Body.Lbrace+1, prioProbe, " "+call+";")
			}
		case *ast.RangeStmt:
			w.insert(l.Body.Lbrace+1, prioProbe, " "+call+";")
		}
	}
}

// condWrapped wraps an if statement's condition of type bool in the
// runtime's Cond, which counts the branch once the condition is
// evaluated, and reports whether it did; a condition of another boolean
// type is left to the probe before the statement.
func (w *fileRewriter) condWrapped(cond ast.Expr) bool {
	b, ok := w.info.TypeOf(cond).(*types.Basic)
	if !ok || b.Kind() != types.Bool && b.Kind() != types.UntypedBool {
		return false
	}
	// The opening comes before, and the closing after, any other
	// rewriting of the condition's own expressions.
	w.insert(cond.Pos(), prioProbe, rtName+".Cond(")
	w.edits = append(w.edits, edit{off: w.off(cond.End()), end: w.off(cond.End()), prio: prioClose, text: ")" + w.lineDirective(cond.End())})
	return true
}

// clauseBranches counts a switch's branch in the clause it takes, once
// its tag and cases are evaluated: a switch with no default clause gets
// one, which does nothing but count.
func (w *fileRewriter) clauseBranches(body *ast.BlockStmt, call string) {
	hasDefault := false
	for _, st := range body.List {
		cc, ok := st.(*ast.CaseClause)
		if !ok {
			continue
		}
		hasDefault = hasDefault || cc.List == nil
		w.insert(cc.Colon+1, prioProbe, " "+call+";")
	}
	if !hasDefault {
		w.insert(body.Rbrace, prioProbe, "default: "+call+"; ")
	}
}

// inside reports whether n lies in outer, which may be nil.
func inside(n, outer ast.Node) bool {
	return outer != nil && outer.Pos() <= n.Pos() && n.End() <= outer.End()
}

// initialisingExpr reports whether an access's expression names the
// memory that a composite literal or a call's variadic arguments make.
func initialisingExpr(expr string) bool {
	for _, p := range []string{"complit.", "complit[", "slicelit[", "varargs["} {
		if strings.HasPrefix(expr, p) {
			return true
		}
	}
	return false
}

// callsWhy is why an access whose expression calls is not probed before
// its statement: the probe would call a second time.
const callsWhy = "its expression calls a function or receives, which a probe would do again"

// accessProbe finds the expression of an access probe and returns the
// statement to probe it before, the expression and the probe's call; no
// statement for a read probed where it is evaluated (readInPlace); or
// why the access cannot be probed.
func (w *fileRewriter) accessProbe(line int, p AccessProbe) (ast.Stmt, ast.Expr, string, string) {
	if line < 1 || line > w.tf.LineCount() {
		return nil, nil, "", "not in its file"
	}
	pos := w.tf.LineStart(line) + token.Pos(p.Col-1)
	if int(pos) >= w.tf.Base()+w.tf.Size() {
		return nil, nil, "", "not in its file"
	}
	path, _ := astutil.PathEnclosingInterval(w.file, pos, pos)
	if len(path) == 0 {
		return nil, nil, "", "not in its file"
	}
	// A read that no statement can be probed before is probed where it
	// is evaluated (readInPlace), if it can be.
	canInPlace := !p.Write && !p.Contents && p.Map == ""
	inPlace := false
	st, ok := w.stmtOf(path[0])
	if !ok {
		const notInStmt = "a write, or an access of a map, in a case of a switch"
		// The expression is looked for in its innermost statement.
		for _, n := range path {
			if s, isStmt := n.(ast.Stmt); isStmt {
				st = s
				break
			}
		}
		if !canInPlace || st == nil {
			return nil, nil, "", notInStmt
		}
		inPlace = true
	}
	want := p.Expr
	if p.Contents {
		want = p.Map
	}
	// The expression: the one the plan names, starting at the probe's
	// column if one does, else anywhere in the statement's line.
	var found ast.Expr
	ast.Inspect(st, func(n ast.Node) bool {
		if found != nil && found.Pos() == pos {
			return false
		}
		if fl, ok := n.(*ast.FuncLit); ok && !(fl.Pos() <= pos && pos < fl.End()) {
			return false
		}
		e, ok := n.(ast.Expr)
		if !ok || w.fset.Position(e.Pos()).Line != line {
			return true
		}
		if types.ExprString(e) == want && (found == nil || e.Pos() == pos) {
			found = e
		}
		return true
	})
	if found == nil {
		return nil, nil, "", "its expression is not on its line"
	}
	if !inPlace && w.declaredIn(found, st) {
		if !canInPlace {
			return nil, nil, "", "a write naming a variable that its own statement declares"
		}
		inPlace = true
	}
	// The statement may be one the expression is not evaluated before,
	// such as a literal's: the expression must be in it.
	if !(st.Pos() <= found.Pos() && found.End() <= st.End()) {
		if ifs, ok := st.(*ast.IfStmt); !ok || ifs.Else == nil {
			return nil, nil, "", "not evaluated where its statement runs"
		}
	}
	name := p.Expr
	switch {
	case p.Contents:
		name = p.Map + "[*]"
	case p.Map != "":
		name = p.Map + "[" + p.Key + "]"
	case p.Elems != "":
		name = elemsName(p)
	}
	site := w.in.site(trace.Site{File: w.name, Line: line, Col: p.Col, Func: p.Func}, name, trace.ObjVar, flagsOf(p))
	if p.Map != "" {
		w.in.sites[site].Map = p.Map
	}
	if !p.Write {
		w.in.sites[site].Guard = p.Guard
	} else if p.Const != nil && w.in.sites[site].Flags&trace.ValueConst != 0 {
		w.in.sites[site].Value = *p.Const
	}
	if p.Elems != "" {
		return w.copyProbe(st, found, inPlace, p, site)
	}
	if p.Contents {
		if !w.pure(found) {
			return nil, nil, "", callsWhy
		}
		return st, found, w.guarded(found, st, fmt.Sprintf("%s.Contents(%s, %s)", rtName, w.text(found), w.siteID(site))), ""
	}
	if ix, ok := ast.Unparen(found).(*ast.IndexExpr); ok {
		if _, isMap := w.info.TypeOf(ix.X).Underlying().(*types.Map); isMap {
			if !w.pure(ix.X) || !w.pure(ix.Index) {
				return nil, nil, "", callsWhy
			}
			fn := "Read"
			if p.Write {
				fn = "Write"
			}
			return st, found, w.guarded(found, st, fmt.Sprintf("%s.Map(%s, %s).%s(%s)", rtName, w.text(ix.X), w.siteID(site), fn, w.text(ix.Index))), ""
		}
	}
	if call, ok := ast.Unparen(found).(*ast.CallExpr); ok && len(call.Args) == 2 {
		// delete(m, k)
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
			if b, ok := w.info.Uses[id].(*types.Builtin); ok && b.Name() == "delete" && w.pure(call.Args[0]) && w.pure(call.Args[1]) {
				return st, found, w.guarded(found, st, fmt.Sprintf("%s.Map(%s, %s).Write(%s)", rtName, w.text(call.Args[0]), w.siteID(site), w.text(call.Args[1]))), ""
			}
		}
	}
	if inPlace {
		if why := w.readInPlace(found, site); why != "" {
			return nil, nil, "", why
		}
		return nil, found, "", ""
	}
	if id, ok := found.(*ast.Ident); ok && w.info.Defs[id] != nil {
		// Its first value, given before any closure or pointer can
		// share it.
		return nil, nil, "", "the variable its own statement declares"
	}
	if !w.pure(found) && canInPlace {
		// Before the statement, the probe would call what found calls
		// a second time; in place, found is evaluated once.
		if why := w.readInPlace(found, site); why != "" {
			return nil, nil, "", why
		}
		return nil, found, "", ""
	}
	if !w.pure(found) {
		return nil, nil, "", callsWhy
	}
	if !w.addressable(found) {
		return nil, nil, "", "its address cannot be taken"
	}
	fn := "Write"
	if !p.Write {
		fn = w.readFunc(found, site)
	}
	call := fmt.Sprintf("%s.%s(&(%s), %s)", rtName, fn, w.text(found), w.siteID(site))
	if fn == "ReadInt" && p.Guard != nil && !p.Guard.Returned && !p.Guard.Len {
		// The parameters the guard compares the value with, recorded
		// just before the read, in the order of its comparisons.
		var params []string
		for _, c := range p.Guard.Cmps {
			if c.Param == "" {
				continue
			}
			if !w.intParamInScope(c.Param, st) {
				w.in.sites[site].Guard = nil
				params = nil
				break
			}
			params = append(params, fmt.Sprintf("%s.Param(int64(%s))", rtName, c.Param))
		}
		if len(params) > 0 {
			call = strings.Join(params, "; ") + "; " + call
		}
	}
	return st, found, w.guarded(found, st, call), ""
}

// readFunc returns the runtime's function that records a read of e, with
// the value read as the Delve recorder records it: an integer or
// boolean, a pointer's address, a slice's or string's length.
func (w *fileRewriter) readFunc(e ast.Expr, site uint32) string {
	switch t := w.info.TypeOf(e).Underlying().(type) {
	case *types.Basic:
		switch {
		case t.Info()&types.IsInteger != 0:
			return "ReadInt"
		case t.Info()&types.IsBoolean != 0:
			return "ReadBool"
		case t.Info()&types.IsString != 0:
			return "ReadStringLen"
		}
	case *types.Pointer:
		w.in.sites[site].Size = sizeOf(t.Elem())
		return "ReadPtr"
	case *types.Slice:
		return "ReadSliceLen"
	}
	return "Read"
}

// readInPlace probes the read of e where the program evaluates it, for a
// read that no statement can be probed before: in a case of a switch, or
// naming a variable that its statement declares (the condition of
// "if v, ok := m[k]; ok && v.n > 0"). e becomes (*avrt.ReadIntAt(&(e),
// site)): evaluated when, and only if, the program evaluates e, so it
// never panics where the program does not. It reports false, probing
// nothing, where &e does not compile, e is written rather than read, or
// e is in a constant expression (len of an array), which a call would
// make not constant.
func (w *fileRewriter) readInPlace(e ast.Expr, site uint32) string {
	if !w.addressable(e) {
		return "its address cannot be taken"
	}
	prev := ast.Node(e)
	for cur := w.parents[e]; cur != nil; prev, cur = cur, w.parents[cur] {
		switch c := cur.(type) {
		case *ast.UnaryExpr:
			if c.Op == token.AND && prev == c.X {
				return "its address is taken"
			}
		case *ast.AssignStmt:
			if slices.Contains(c.Lhs, prev.(ast.Expr)) {
				return "assigned to"
			}
		case *ast.IncDecStmt:
			return "assigned to"
		case *ast.RangeStmt:
			if prev == c.Key || prev == c.Value {
				return "assigned to"
			}
		}
		x, ok := cur.(ast.Expr)
		if !ok {
			break
		}
		if tv, ok := w.info.Types[x]; ok && tv.Value != nil {
			return "in a constant expression"
		}
	}
	if tv, ok := w.info.Types[e]; ok && tv.Value != nil {
		return "in a constant expression"
	}
	// The operands of an expression are read in an order the language
	// leaves open, except that calls and receives run left to right (and
	// a && or || operand after the one on its left): the compiler loads
	// x.n in x.n == f() after f returns. Wrapped, x.n's address would be
	// taken before f runs, which changes what the program reads if f
	// changes x. So the expression whose operands e is read among must
	// make no call or receive but e's own.
	unit := e
	for {
		x, ok := w.parents[unit].(ast.Expr)
		if b, logical := x.(*ast.BinaryExpr); !ok || logical && (b.Op == token.LAND || b.Op == token.LOR) {
			break
		}
		unit = x
	}
	if w.runsCode(unit, e, w.ancestors(e, unit)) {
		return "read among calls, which could change it before the program reads it"
	}
	// The guard's parameters would have to be recorded just before the
	// read, which an expression has no room for.
	if g := w.in.sites[site].Guard; g != nil {
		for _, c := range g.Cmps {
			if c.Param != "" {
				w.in.sites[site].Guard = nil
				break
			}
		}
	}
	w.inPlace = append(w.inPlace, inPlaceRead{e: e, fn: w.readFunc(e, site) + "At", site: site})
	return ""
}

// ancestors returns the expressions from e's parent up to outer.
func (w *fileRewriter) ancestors(e, outer ast.Expr) map[ast.Node]bool {
	up := make(map[ast.Node]bool)
	for n := ast.Node(e); n != ast.Node(outer); {
		n = w.parents[n]
		up[n] = true
	}
	return up
}

// runsCode reports whether evaluating e, but not its subexpression
// except, calls a function (other than a conversion or a builtin that
// only reads, len and cap) or receives from a channel. A call in
// callsAfter (one that holds except, which runs once except is
// evaluated) does not count, its other operands do.
func (w *fileRewriter) runsCode(e, except ast.Expr, callsAfter map[ast.Node]bool) bool {
	runs := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // not run here
		case ast.Expr:
			if n == except {
				return false
			}
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			if w.onlyReads(n) || callsAfter[n] {
				return true
			}
			runs = true
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				runs = true
			}
		}
		return !runs
	})
	return runs
}

// An inPlaceRead is a read probed where it is evaluated (readInPlace).
type inPlaceRead struct {
	e    ast.Expr
	fn   string
	site uint32
}

// placeReads inserts the wrappings of the reads probed in place. One
// read's expression may hold another's (a.b in a.b.c, p in *p): the
// outer one opens first and closes last. In the order of their starts,
// outer first, the openings nest; the closings nest in the reverse order
// (edits at one offset apply in the order they were added).
func (w *fileRewriter) placeReads() {
	reads := slices.Clone(w.inPlace)
	slices.SortStableFunc(reads, func(a, b inPlaceRead) int {
		if c := cmp.Compare(a.e.Pos(), b.e.Pos()); c != 0 {
			return c
		}
		return cmp.Compare(b.e.End(), a.e.End())
	})
	for _, r := range slices.Backward(reads) {
		w.edits = append(w.edits, edit{off: w.off(r.e.End()), end: w.off(r.e.End()), prio: prioReadEnd,
			text: fmt.Sprintf("), %s))", w.siteID(r.site)) + w.lineDirective(r.e.End())})
	}
	for _, r := range reads {
		w.edits = append(w.edits, edit{off: w.off(r.e.Pos()), end: w.off(r.e.Pos()), prio: prioRead,
			text: fmt.Sprintf("(*%s.%s(&(", rtName, r.fn) + w.lineDirective(r.e.Pos())})
	}
}

// sizeOf returns the size of values of type t on the machine that
// records, 0 if it depends on a type parameter.
func sizeOf(t types.Type) (size uint64) {
	defer func() {
		// go/types cannot size a type parameter, and says so by
		// panicking.
		if recover() != nil {
			size = 0
		}
	}()
	return uint64(types.SizesFor("gc", runtime.GOARCH).Sizeof(t))
}

// intParamInScope reports whether name is, before st, an integer
// parameter of the function st is in.
func (w *fileRewriter) intParamInScope(name string, st ast.Stmt) bool {
	scope := w.pkg.Types.Scope().Innermost(st.Pos())
	if scope == nil {
		return false
	}
	_, obj := scope.LookupParent(name, st.Pos())
	v, ok := obj.(*types.Var)
	if !ok || v.IsField() {
		return false
	}
	b, ok := v.Type().Underlying().(*types.Basic)
	if !ok || b.Info()&types.IsInteger == 0 {
		return false
	}
	// A parameter: declared in the signature of st's function.
	body := w.bodyOf(st)
	return body != nil && v.Pos() < body.Lbrace
}

// guarded runs a probe that may panic where the program does not
// (conditional) through the runtime's Try, which recovers.
func (w *fileRewriter) guarded(n ast.Node, st ast.Stmt, call string) string {
	if w.conditional(n, st) {
		return rtName + ".Try(func() { " + call + " })"
	}
	return call
}

// flagsOf returns the flags of a probe's site; a constant write's value
// goes with them (rawSite.Value).
func flagsOf(p AccessProbe) trace.Flags {
	var f trace.Flags
	if p.Write && p.AddrVaries {
		f |= trace.AddrVaries
	}
	if p.Write && p.Const != nil {
		f |= trace.ValueConst
	}
	if p.Rechecks {
		f |= trace.Rechecks
	}
	return f
}

// syncMethods maps the sync package's methods to the runtime's wrappers
// and the kind of their receiver.
var syncMethods = map[string]struct {
	wrapper string
	obj     trace.ObjKind
}{
	"(*sync.Mutex).Lock":       {"Lock", trace.ObjMutex},
	"(*sync.Mutex).TryLock":    {"TryLock", trace.ObjMutex},
	"(*sync.Mutex).Unlock":     {"Unlock", trace.ObjMutex},
	"(*sync.RWMutex).Lock":     {"WLock", trace.ObjRWMutex},
	"(*sync.RWMutex).TryLock":  {"TryWLock", trace.ObjRWMutex},
	"(*sync.RWMutex).Unlock":   {"WUnlock", trace.ObjRWMutex},
	"(*sync.RWMutex).RLock":    {"RLock", trace.ObjRWMutex},
	"(*sync.RWMutex).TryRLock": {"TryRLock", trace.ObjRWMutex},
	"(*sync.RWMutex).RUnlock":  {"RUnlock", trace.ObjRWMutex},
	"(*sync.WaitGroup).Add":    {"WGAdd", trace.ObjWaitGroup},
	"(*sync.WaitGroup).Done":   {"WGDone", trace.ObjWaitGroup},
	"(*sync.WaitGroup).Wait":   {"WGWait", trace.ObjWaitGroup},
	"(*sync.WaitGroup).Go":     {"WGGo", trace.ObjWaitGroup},
	"(*sync.Cond).Wait":        {"CondWait", trace.ObjCond},
	"(*sync.Cond).Signal":      {"CondSignal", trace.ObjCond},
	"(*sync.Cond).Broadcast":   {"CondBroadcast", trace.ObjCond},
	"(*sync.Once).Do":          {"OnceDo", trace.ObjOnce},
	"(*sync.Pool).Put":         {"PoolPut", trace.ObjCond},
	"(*sync.Pool).Get":         {"PoolGet", trace.ObjCond},
	// Through the interface, a *sync.Mutex's (avrt.LockerLock): the
	// locks of a sync.Cond's L, of code given a Locker.
	"(sync.Locker).Lock":   {"LockerLock", trace.ObjMutex},
	"(sync.Locker).Unlock": {"LockerUnlock", trace.ObjMutex},
}

// code rewrites the calls, channel operations and go statements of the
// file.
func (w *fileRewriter) code() {
	ast.Inspect(w.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			w.goStmt(n)
		case *ast.DeclStmt:
			w.freshVars(n)
		case *ast.AssignStmt:
			w.freshDefined(n)
		case *ast.FuncDecl:
			w.freshParams(n.Body, n.Recv, n.Type.Params, n.Type.Results)
		case *ast.FuncLit:
			w.freshParams(n.Body, n.Type.Params, n.Type.Results)
		case *ast.CallExpr:
			w.call(n)
		case *ast.SendStmt:
			w.send(n)
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				w.recv(n)
			}
			if _, ok := ast.Unparen(n.X).(*ast.CompositeLit); ok && n.Op == token.AND {
				w.made(n, "Made")
			}
		case *ast.CompositeLit:
			// A map literal with its type written (not one whose type
			// its enclosing literal gives) makes a map as make does.
			// Not one whose address is taken (&M{} of a map type M),
			// which Made records.
			if _, ok := w.info.TypeOf(n).Underlying().(*types.Map); ok && n.Type != nil && !w.addressTaken(n) {
				w.made(n, "MadeMap")
			}
			// So does a slice literal its backing array, as make.
			if _, ok := w.info.TypeOf(n).Underlying().(*types.Slice); ok && n.Type != nil && !w.addressTaken(n) {
				w.made(n, "MadeSlice")
			}
		case *ast.RangeStmt:
			if _, ok := w.info.TypeOf(n.X).Underlying().(*types.Chan); ok && w.pure(n.X) && n.Body != nil {
				site := w.siteAt(n, false, "", trace.ObjChan)
				w.insert(n.Body.Lbrace+1, prioProbe, fmt.Sprintf(" %s.Received(%s, %s);", rtName, w.text(n.X), w.siteID(site)))
				if st, ok := w.stmtOf(n); ok && st == ast.Stmt(n) {
					w.after(n, fmt.Sprintf("%s.RangeEnd(%s, %s)", rtName, w.text(n.X), w.siteID(site)))
				}
			}
		}
		return true
	})
}

// freshVars records, after a declaration var x T (freshDefined: x :=
// v) of a function's variable that a closure captures or whose address is taken,
// that x is new memory (avrt.Made): a goroutine's stack, as the heap,
// gives the memory of a variable of a goroutine that ended to the next
// one, whose variable it is not (parallel tests that each declare one,
// workers that each capture their own). The write of x := v is probed
// after the statement, after Made (definesCaptured); a declaration var x
// = v is left as it is: its first write, probed before the statement,
// would go to the old variable.
func (w *fileRewriter) freshVars(d *ast.DeclStmt) {
	gd, ok := d.Decl.(*ast.GenDecl)
	if !ok || gd.Tok != token.VAR {
		return
	}
	if st, ok := w.stmtOf(d); !ok || st != ast.Stmt(d) {
		return
	}
	var calls []string
	for _, spec := range gd.Specs {
		vs, ok := spec.(*ast.ValueSpec)
		if !ok || len(vs.Values) > 0 {
			continue
		}
		for _, id := range vs.Names {
			if w.capturedDef(id) {
				calls = append(calls, w.madeCall(id))
			}
		}
	}
	if len(calls) > 0 {
		w.after(d, strings.Join(calls, "; "))
	}
}

// freshDefined is freshVars for x := v: Made after the statement, before
// the probe of its write (definesCaptured).
func (w *fileRewriter) freshDefined(as *ast.AssignStmt) {
	if as.Tok != token.DEFINE {
		return
	}
	if st, ok := w.stmtOf(as); !ok || st != ast.Stmt(as) {
		return
	}
	var calls []string
	for _, l := range as.Lhs {
		if id, ok := l.(*ast.Ident); ok && w.capturedDef(id) {
			calls = append(calls, w.madeCall(id))
		}
	}
	if len(calls) > 0 {
		w.edits = append(w.edits, edit{off: w.off(as.End()), end: w.off(as.End()), prio: prioMade, text: "; " + strings.Join(calls, "; ") + w.lineDirective(as.End())})
	}
}

// capturedDef reports whether id declares a function's variable that a
// closure captures or whose address is taken (isCaptured).
func (w *fileRewriter) capturedDef(id *ast.Ident) bool {
	v, ok := w.info.Defs[id].(*types.Var)
	return ok && id.Name != "_" && w.isCaptured(v)
}

// madeCall is the call that records the variable id declares as new
// memory.
func (w *fileRewriter) madeCall(id *ast.Ident) string {
	return fmt.Sprintf("%s.Made(&%s, %s)", rtName, id.Name, w.siteID(w.siteAt(id, false, "", 0)))
}

// freshParams records, at the start of a function's body, that its
// receiver, parameters and named results that a closure captures or
// whose address is taken are new memory (avrt.Made), as freshVars does for its
// variables: a function that returns a value it made through its own
// methods (func newBuf() (b Buf) { b.Reset(); return }) writes its
// result on its goroutine's stack, which an ended goroutine's, or the
// goroutine's own before it grew, may have had at the same address.
func (w *fileRewriter) freshParams(body *ast.BlockStmt, fields ...*ast.FieldList) {
	if body == nil {
		return
	}
	var calls []string
	for _, fl := range fields {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, id := range f.Names {
				if w.capturedDef(id) {
					calls = append(calls, w.madeCall(id))
				}
			}
		}
	}
	if len(calls) > 0 {
		w.insert(body.Lbrace+1, prioBegin, " "+strings.Join(calls, "; ")+";")
	}
}

// isCaptured reports whether the function variable v is used in a
// function literal that does not declare it, or has its address taken,
// explicitly (&v) or by a call of a method with a pointer receiver
// (v.Reset()).
func (w *fileRewriter) isCaptured(v *types.Var) bool {
	if w.captured == nil {
		w.captured = map[*types.Var]bool{}
		var lits []*ast.FuncLit
		ast.Inspect(w.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				lits = append(lits, n)
			case *ast.UnaryExpr:
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND {
					if v, ok := w.info.Uses[id].(*types.Var); ok {
						w.captured[v] = true
					}
				}
			case *ast.SelectorExpr:
				sel, ok := w.info.Selections[n]
				if !ok || sel.Kind() != types.MethodVal {
					break
				}
				if _, ptrRecv := sel.Obj().Type().(*types.Signature).Recv().Type().Underlying().(*types.Pointer); !ptrRecv {
					break
				}
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					if v, ok := w.info.Uses[id].(*types.Var); ok {
						if _, isPtr := v.Type().Underlying().(*types.Pointer); !isPtr {
							w.captured[v] = true
						}
					}
				}
			}
			return true
		})
		for _, fl := range lits {
			ast.Inspect(fl.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					if v, ok := w.info.Uses[id].(*types.Var); ok && !v.IsField() && (v.Pos() < fl.Pos() || v.Pos() >= fl.End()) {
						w.captured[v] = true
					}
				}
				return true
			})
		}
	}
	return w.captured[v]
}

// outerParent returns the parent of n, above the parentheses around n.
func (w *fileRewriter) outerParent(n ast.Node) ast.Node {
	p := w.parents[n]
	for {
		par, ok := p.(*ast.ParenExpr)
		if !ok {
			return p
		}
		p = w.parents[par]
	}
}

// addressTaken reports whether e is the operand of &.
func (w *fileRewriter) addressTaken(e ast.Expr) bool {
	u, ok := w.outerParent(e).(*ast.UnaryExpr)
	return ok && u.Op == token.AND
}

// made wraps an allocation, &T{...} or new(T) (wrapper Made), a slice
// made by make, a literal or a conversion of a string (MadeSlice), or a
// map, made or written as a literal (MadeMap), in the call that records
// the memory it returns: the garbage collector may have freed an
// earlier object there, whose variables the new one's are not.
func (w *fileRewriter) made(x ast.Expr, wrapper string) {
	site := w.siteAt(x, false, "", 0)
	w.replace(x.Pos(), x.Pos(), rtName+"."+wrapper+"(")
	w.closeWrap(x.End(), site)
}

// closeWrap closes, at end, the call of the recording runtime that wraps
// an expression ending there, with the site's argument. It comes before
// any other rewriting's that ends where it ends, which encloses it.
func (w *fileRewriter) closeWrap(end token.Pos, site uint32) {
	w.edits = append(w.edits, edit{off: w.off(end), end: w.off(end), prio: prioWrapEnd,
		text: fmt.Sprintf(", %s)", w.siteID(site)) + w.lineDirective(end)})
}

// isString reports whether t is a string type.
func isString(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// appended wraps append(x, ...) in the call that records the backing
// array it returns when that is new (avrt.Appended): x is evaluated a
// second time before the append, for the array it had, so only an x that
// is read only (pure, or a slice expression of such operands) is,
// and not one of a type parameter's type, whose element type the
// wrapper's own type parameters could not be inferred from.
func (w *fileRewriter) appended(c *ast.CallExpr) {
	x := c.Args[0]
	if _, ok := w.info.TypeOf(x).(*types.TypeParam); ok || strings.Contains(w.text(x), "//") {
		return
	}
	if !w.pure(x) {
		se, ok := ast.Unparen(x).(*ast.SliceExpr)
		if !ok || !w.pure(se.X) {
			return
		}
		for _, e := range []ast.Expr{se.Low, se.High, se.Max} {
			if e != nil && !w.pure(e) {
				return
			}
		}
	}
	site := w.siteAt(c, false, "", 0)
	w.replace(c.Pos(), c.Pos(), rtName+".Appended("+w.text(x)+", ")
	w.closeWrap(c.End(), site)
}

func (w *fileRewriter) call(c *ast.CallExpr) {
	if tv, ok := w.info.Types[c.Fun]; ok && tv.IsType() && len(c.Args) == 1 {
		// A conversion of a string to a slice ([]byte(s), []rune(s))
		// makes the slice's backing array.
		if _, ok := tv.Type.Underlying().(*types.Slice); ok && isString(w.info.TypeOf(c.Args[0])) {
			w.made(c, "MadeSlice")
		}
		return
	}
	if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok {
		if b, ok := w.info.Uses[id].(*types.Builtin); ok && b.Name() == "make" && len(c.Args) > 0 {
			switch w.info.TypeOf(c).Underlying().(type) {
			case *types.Chan:
				site := w.siteAt(c, false, "", trace.ObjChan)
				w.replace(c.Pos(), c.Pos(), rtName+".MadeChan(")
				w.replace(c.End(), c.End(), fmt.Sprintf(", %s)", w.siteID(site)))
			case *types.Slice:
				w.made(c, "MadeSlice")
			case *types.Map:
				w.made(c, "MadeMap")
			}
		}
		if b, ok := w.info.Uses[id].(*types.Builtin); ok && b.Name() == "new" && len(c.Args) == 1 {
			w.made(c, "Made")
		}
		if b, ok := w.info.Uses[id].(*types.Builtin); ok && b.Name() == "append" && len(c.Args) > 1 {
			w.appended(c)
		}
		if b, ok := w.info.Uses[id].(*types.Builtin); ok && b.Name() == "close" && len(c.Args) == 1 {
			if ch, ok := w.info.TypeOf(c.Args[0]).Underlying().(*types.Chan); ok && ch.Dir() != types.RecvOnly {
				site := w.siteAt(c, false, "", trace.ObjChan)
				wrapper := ".CloseChan("
				if ch.Dir() == types.SendOnly {
					wrapper = ".CloseSend("
				}
				w.replace(c.Fun.Pos(), c.Lparen+1, rtName+wrapper)
				w.replace(c.Rparen, c.Rparen+1, fmt.Sprintf(", %s)", w.siteID(site)))
			}
		}
		return
	}
	fun, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
	if !ok {
		return
	}
	fn, ok := w.info.Uses[fun.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return
	}
	switch fn.Pkg().Path() {
	case "sync/atomic":
		w.atomicCall(c, fun, fn)
		return
	case "testing":
		w.testingCall(c, fn)
		return
	case "context":
		w.contextCall(c, fn)
		return
	case "reflect":
		w.reflectCall(c, fun, fn)
		return
	case "sync":
	default:
		return
	}
	m, ok := syncMethods[fn.FullName()]
	if !ok || m.wrapper == "" {
		return
	}
	sel, ok := w.info.Selections[fun]
	if !ok || sel.Kind() != types.MethodVal {
		return
	}
	recv, ptr := w.receiver(fun, sel)
	// Named as the Delve recorder names them: a lock by the plan, the
	// others by their kind and place (convert.go).
	site := w.siteAt(c, false, w.in.plan.LockNames[Line{w.name, w.fset.Position(c.Pos()).Line}], m.obj)
	amp := "&"
	if ptr || types.IsInterface(fn.Type().(*types.Signature).Recv().Type()) {
		// A pointer already, or an interface value (a sync.Locker).
		amp = ""
	}
	w.replace(fun.X.Pos(), fun.X.Pos(), rtName+"."+m.wrapper+"("+amp)
	if len(c.Args) == 0 {
		w.replace(fun.X.End(), c.End(), fmt.Sprintf("%s, %s)", recv, w.siteID(site)))
		return
	}
	w.replace(fun.X.End(), c.Lparen+1, recv+", ")
	w.replace(c.Rparen, c.Rparen+1, fmt.Sprintf(", %s)", w.siteID(site)))
}

// reflectMethods maps the reflect package's channel operations to the
// runtime's wrappers (avrt.Select).
var reflectMethods = map[string]string{
	"reflect.Select":          "Select",
	"(reflect.Value).Send":    "ValueSend",
	"(reflect.Value).TrySend": "ValueTrySend",
	"(reflect.Value).Recv":    "ValueRecv",
	"(reflect.Value).TryRecv": "ValueTryRecv",
	"(reflect.Value).Close":   "ValueClose",
}

// reflectCall wraps a channel operation made through the reflect package,
// which orders the goroutines as the statement it stands for does.
func (w *fileRewriter) reflectCall(c *ast.CallExpr, fun *ast.SelectorExpr, fn *types.Func) {
	wrapper, ok := reflectMethods[fn.FullName()]
	if !ok || w.deferredOrGo(c) {
		return
	}
	site := w.siteAt(c, false, "", trace.ObjChan)
	sel, ok := w.info.Selections[fun]
	switch {
	case !ok:
		// reflect.Select(cases), to avrt.Select(reflect.Select, cases):
		// the file's import of reflect stays used.
		w.replace(c.Fun.Pos(), c.Fun.Pos(), rtName+"."+wrapper+"(")
		w.replace(c.Fun.End(), c.Lparen+1, ", ")
	case sel.Kind() != types.MethodVal || len(sel.Index()) != 1:
		return // a method expression, or a method of an embedded Value
	default:
		deref := ""
		if _, ptr := sel.Recv().Underlying().(*types.Pointer); ptr {
			deref = "*"
		}
		w.replace(fun.X.Pos(), fun.X.Pos(), rtName+"."+wrapper+"("+deref)
		sep := ", "
		if len(c.Args) == 0 {
			sep = ""
		}
		w.replace(fun.X.End(), c.Lparen+1, sep)
	}
	w.replace(c.Rparen, c.Rparen+1, fmt.Sprintf(", %s)", w.siteID(site)))
}

// contextCall rewrites a call that makes a cancelable context, or that
// arranges a call after a context is done, so that the orders the
// context package makes where no probe is are recorded:
//   - the cancel function records the close of the context's Done
//     channel, and of the Done channels of the contexts made from it that
//     its cancel closes with it (avrt.Derive): a goroutine that waits on
//     <-ctx.Done() is ordered after the canceller's work, as the program
//     orders it. The receive itself is recorded as any other (ctx.Done()
//     is pure);
//   - a parent of a type of the program's is given to the context package
//     behind a wrapper whose Err records the receive from its Done
//     channel that the package's goroutine made before it asks;
//   - the function given to context.AfterFunc records the receive from
//     the context's Done channel before it runs, as the package starts it
//     only once the channel is closed.
//
// The function called stays in the rewritten text, passed to avrt's
// wrapper (avrt.Derive(context.WithCancel, parent, site)), so that the
// file's import of the context package stays used. A call whose
// arguments are one call's results keeps the older form, which records
// the context's own close only (avrt.Cancelable(site)(call)).
func (w *fileRewriter) contextCall(c *ast.CallExpr, fn *types.Func) {
	if fn.Type().(*types.Signature).Recv() != nil {
		return
	}
	wrapper, legacy := "", "Cancelable"
	switch fn.Name() {
	case "WithCancel":
		wrapper = "Derive"
	case "WithCancelCause":
		wrapper, legacy = "DeriveCause", "CancelableCause"
	case "WithTimeout", "WithDeadline":
		wrapper = "Derive1"
	case "WithTimeoutCause", "WithDeadlineCause":
		wrapper = "Derive2"
	case "AfterFunc":
		wrapper, legacy = "AfterFunc", ""
	default:
		return
	}
	site := w.siteAt(c, false, "", trace.ObjChan)
	if fn.Type().(*types.Signature).Params().Len() != len(c.Args) || c.Ellipsis.IsValid() {
		if legacy != "" {
			w.replace(c.Pos(), c.Pos(), fmt.Sprintf("%s.%s(%s)(", rtName, legacy, w.siteID(site)))
			w.replace(c.End(), c.End(), ")")
		}
		return
	}
	w.replace(c.Pos(), c.Pos(), fmt.Sprintf("%s.%s(", rtName, wrapper))
	w.replace(c.Fun.End(), c.Lparen+1, ", ")
	// A trailing comma before the parenthesis stays where it is.
	last := c.Args[len(c.Args)-1]
	sep := ", "
	if trailingComma(w.src[w.off(last.End()):w.off(c.Rparen)]) {
		sep = ""
	}
	w.replace(c.Rparen, c.Rparen+1, fmt.Sprintf("%s%s)", sep, w.siteID(site)))
}

// trailingComma reports whether the text between a call's last argument
// and its closing parenthesis holds a comma outside its comments.
func trailingComma(b []byte) bool {
	var sc scanner.Scanner
	sc.Init(token.NewFileSet().AddFile("", -1, len(b)), b, nil, 0)
	for {
		_, tok, _ := sc.Scan()
		switch tok {
		case token.COMMA:
			return true
		case token.EOF:
			return false
		}
	}
}

// isContextDone reports whether c calls the Done method of a
// context.Context: successive calls return the same channel, so a probe
// may call it again.
func (w *fileRewriter) isContextDone(c *ast.CallExpr) bool {
	fun, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
	if !ok || fun.Sel.Name != "Done" || len(c.Args) != 0 {
		return false
	}
	fn, ok := w.info.Uses[fun.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return false
	}
	if fn.Pkg().Path() == "context" {
		return true // the Context interface's method
	}
	// A type of the program's that implements context.Context.
	for _, imp := range w.pkg.Types.Imports() {
		if imp.Path() != "context" {
			continue
		}
		if obj := imp.Scope().Lookup("Context"); obj != nil {
			iface, _ := obj.Type().Underlying().(*types.Interface)
			t := w.info.TypeOf(fun.X)
			return iface != nil && t != nil && types.Implements(t, iface)
		}
	}
	return false
}

// receiver returns the selectors that lead from a method call's operand
// to the sync value whose method it calls (".Mutex" for a promoted
// method), and whether that value is a pointer.
func (w *fileRewriter) receiver(fun *ast.SelectorExpr, sel *types.Selection) (string, bool) {
	t := sel.Recv()
	var path strings.Builder
	idx := sel.Index()
	for _, i := range idx[:len(idx)-1] {
		u := t
		if p, ok := u.Underlying().(*types.Pointer); ok {
			u = p.Elem()
		}
		st, ok := u.Underlying().(*types.Struct)
		if !ok {
			break
		}
		f := st.Field(i)
		path.WriteString("." + f.Name())
		t = f.Type()
	}
	_, ptr := t.Underlying().(*types.Pointer)
	return path.String(), ptr
}

// atomicCall wraps a sync/atomic call: a load or read-modify-write is
// recorded after it returned (a CompareAndSwap that did not swap as a
// load), a store before it.
func (w *fileRewriter) atomicCall(c *ast.CallExpr, fun *ast.SelectorExpr, fn *types.Func) {
	if w.deferredOrGo(c) {
		w.in.Deferred++
		return
	}
	var target string
	if sel, ok := w.info.Selections[fun]; ok {
		if sel.Kind() != types.MethodVal {
			return
		}
		recv, ptr := w.receiver(fun, sel)
		if !w.pure(fun.X) {
			return
		}
		target = w.text(fun.X) + recv
		if !ptr {
			target = "&" + target
		}
	} else {
		if len(c.Args) == 0 || !w.pure(c.Args[0]) {
			return
		}
		target = w.text(c.Args[0])
	}
	name := fn.Name()
	var kind string
	switch {
	case strings.HasPrefix(name, "Load"):
		kind = "Loaded"
	case strings.HasPrefix(name, "Store"):
		kind = "AtomicStore"
	case strings.HasPrefix(name, "CompareAndSwap"):
		// Its result says whether it wrote: a CompareAndSwap that
		// failed is a load (a retry loop's failed try loses nothing).
		kind = "Swapped"
	case strings.HasPrefix(name, "Add"), strings.HasPrefix(name, "Swap"),
		strings.HasPrefix(name, "And"), strings.HasPrefix(name, "Or"):
		kind = "Modified"
	default:
		return
	}
	site := w.siteAt(c, true, strings.TrimPrefix(target, "&"), trace.ObjVar)
	if kind == "AtomicStore" {
		es, ok := w.parents[c].(*ast.ExprStmt)
		if !ok {
			return
		}
		st, ok := w.stmtOf(c)
		if !ok || st != ast.Stmt(es) {
			return
		}
		w.before(es, prioProbe, fmt.Sprintf("%s.AtomicStore(%s, %s)", rtName, target, w.siteID(site)))
		w.in.Probes++
		return
	}
	w.replace(c.Pos(), c.Pos(), rtName+"."+kind+"(")
	w.replace(c.End(), c.End(), fmt.Sprintf(", %s, %s)", target, w.siteID(site)))
	w.in.Probes++
}

func (w *fileRewriter) send(s *ast.SendStmt) {
	if !w.pure(s.Chan) {
		return
	}
	site := w.siteAt(s, false, "", trace.ObjChan)
	if cc, ok := w.parents[s].(*ast.CommClause); ok && cc.Comm == ast.Stmt(s) {
		// A select's send case: recorded at the start of its body, once
		// the case was chosen (avrt.Sent; the converter puts it before
		// its receive).
		w.insert(cc.Colon+1, prioProbe, fmt.Sprintf(" %s.Sent(%s, %s);", rtName, w.text(s.Chan), w.siteID(site)))
		return
	}
	st, ok := w.stmtOf(s)
	if !ok || st != ast.Stmt(s) {
		return
	}
	w.before(s, prioProbe, fmt.Sprintf("%s.Send(%s, %s)", rtName, w.text(s.Chan), w.siteID(site)))
}

func (w *fileRewriter) recv(u *ast.UnaryExpr) {
	parent := w.outerParent(u)
	pure := w.pure(u.X)
	// A select's receive case: recorded at the start of its body (not
	// from a channel a call returns, which is not evaluated again).
	if st, ok := parent.(ast.Stmt); ok {
		if cc, ok := w.parents[st].(*ast.CommClause); ok && cc.Comm == st {
			if pure {
				site := w.siteAt(u, false, "", trace.ObjChan)
				w.insert(cc.Colon+1, prioProbe, fmt.Sprintf(" %s.Received(%s, %s);", rtName, w.text(u.X), w.siteID(site)))
			}
			return
		}
	}
	if _, ok := parent.(*ast.CommClause); ok {
		return
	}
	if !pure {
		w.recvFrom(u, parent)
		return
	}
	site := w.siteAt(u, false, "", trace.ObjChan)
	// A receive of two values, or one whose value is dropped: recorded
	// after its statement.
	var st ast.Stmt
	switch p := parent.(type) {
	case *ast.ExprStmt:
		st = p
	case *ast.AssignStmt:
		if len(p.Lhs) == 2 {
			st = p
		}
	case *ast.ValueSpec:
		if len(p.Names) == 2 {
			ds, ok := w.parents[w.parents[p]].(*ast.DeclStmt)
			if !ok {
				return
			}
			st = ds
		}
	}
	if st != nil {
		if s, ok := w.stmtOf(st); ok && s == st {
			w.after(st, fmt.Sprintf("%s.Received(%s, %s)", rtName, w.text(u.X), w.siteID(site)))
		}
		return
	}
	// Any other: wrapped, recorded after it returned.
	w.replace(u.Pos(), u.Pos(), rtName+".Recv(")
	w.replace(u.End(), u.End(), fmt.Sprintf(", %s, %s)", w.text(u.X), w.siteID(site)))
}

// recvFrom records the receive <-x, outside a select's case, of an
// operand that is not evaluated a second time (a call's result:
// <-clock.After(d)) by a call that does the receive (avrt.RecvFrom, or
// RecvFromOK for two values) and records it after it returned. Not from
// an operand of a type parameter's type.
func (w *fileRewriter) recvFrom(u *ast.UnaryExpr, parent ast.Node) {
	if _, ok := w.info.TypeOf(u.X).(*types.TypeParam); ok {
		return
	}
	wrapper := "RecvFrom"
	switch p := parent.(type) {
	case *ast.AssignStmt:
		if len(p.Lhs) == 2 {
			wrapper = "RecvFromOK"
		}
	case *ast.ValueSpec:
		if len(p.Names) == 2 {
			wrapper = "RecvFromOK"
		}
	}
	w.replace(u.OpPos, u.X.Pos(), rtName+"."+wrapper+"(")
	w.closeWrap(u.End(), w.siteAt(u, false, "", trace.ObjChan))
}

// goStmt makes the child of a go statement learn its parent: the parent
// records a fork, whose token the child records when it starts. A
// function literal gets the token as a first parameter; another call is
// wrapped in one, its function and arguments evaluated by the parent
// first, as the go statement does.
func (w *fileRewriter) goStmt(g *ast.GoStmt) {
	site := w.siteAt(g, false, "", 0)
	start := fmt.Sprintf("%s.Start(_avtok); defer %s.End(); ", rtName, rtName)
	if fl, ok := ast.Unparen(g.Call.Fun).(*ast.FuncLit); ok && !unnamedParams(fl) && !g.Call.Ellipsis.IsValid() {
		tok := "_avtok uint64"
		if fl.Type.Params.NumFields() > 0 {
			tok += ", "
		}
		w.insert(fl.Type.Params.Opening+1, prioCode, tok)
		w.insert(fl.Body.Lbrace+1, prioCode, " "+start)
		fork := fmt.Sprintf("%s.Fork(%s)", rtName, w.siteID(site))
		if len(g.Call.Args) > 0 {
			fork += ", "
		}
		w.insert(g.Call.Lparen+1, prioCode, fork)
		return
	}
	st, ok := w.stmtOf(g)
	if !ok || st != ast.Stmt(g) {
		return
	}
	var binds, vals []string
	fun := w.text(g.Call.Fun)
	bindFun := false
	switch f := ast.Unparen(g.Call.Fun).(type) {
	case *ast.Ident:
		_, bindFun = w.info.Uses[f].(*types.Var)
	case *ast.SelectorExpr:
		if sel, ok := w.info.Selections[f]; ok {
			bindFun = sel.Kind() == types.MethodVal || sel.Kind() == types.FieldVal
		}
	default:
		if tv, ok := w.info.Types[g.Call.Fun]; ok && tv.IsValue() {
			bindFun = true
		}
	}
	if tv, ok := w.info.Types[g.Call.Fun]; ok && (tv.IsBuiltin() || tv.IsType()) {
		return
	}
	if bindFun {
		binds, vals = append(binds, "_avf"), append(vals, fun)
		fun = "_avf"
	}
	args := make([]string, len(g.Call.Args))
	for i, a := range g.Call.Args {
		tv := w.info.Types[a]
		if tv.Value != nil || tv.IsNil() {
			args[i] = w.text(a)
			continue
		}
		name := "_ava" + strconv.Itoa(i)
		binds, vals = append(binds, name), append(vals, w.text(a))
		args[i] = name
	}
	callText := fun + "(" + strings.Join(args, ", ")
	if g.Call.Ellipsis.IsValid() {
		callText += "..."
	}
	callText += ")"
	var b strings.Builder
	b.WriteString("{ ")
	if len(binds) > 0 {
		fmt.Fprintf(&b, "%s := %s; ", strings.Join(binds, ", "), strings.Join(vals, ", "))
	}
	fmt.Fprintf(&b, "go func(_avtok uint64) { %s%s }(%s.Fork(%s)) }", start, callText, rtName, w.siteID(site))
	w.spans = append(w.spans, [2]int{w.off(g.Pos()), w.off(g.End())})
	w.replace(g.Pos(), g.End(), b.String())
}

func unnamedParams(fl *ast.FuncLit) bool {
	for _, f := range fl.Type.Params.List {
		if len(f.Names) == 0 {
			return true
		}
	}
	return false
}

// regions places the begins and ends of the plan's regions in the file.
func (w *fileRewriter) regions() {
	for _, rp := range w.in.plan.Regions {
		if rp.Begin.File != w.name {
			continue
		}
		w.region(rp)
	}
}

func (w *fileRewriter) region(rp RegionProbe) {
	if rp.Begin.Line < 1 || rp.Begin.Line > w.tf.LineCount() {
		return
	}
	pos := w.tf.LineStart(rp.Begin.Line) + token.Pos(max(rp.BeginCol, 1)-1)
	path, _ := astutil.PathEnclosingInterval(w.file, pos, pos)
	if len(path) == 0 {
		return
	}
	first, ok := w.stmtOf(path[0])
	if !ok {
		return
	}
	// The statement list that holds the region's lines.
	for {
		if _, ok := first.(*ast.IfStmt); ok {
			if p, ok := w.parents[first].(*ast.IfStmt); ok && p.Else == first {
				return
			}
		}
		list := w.listOf(first)
		if list == nil {
			return
		}
		endLine := w.fset.Position(list[len(list)-1].End()).Line
		if endLine >= rp.EndLine {
			break
		}
		up, ok := w.stmtOf(w.parents[first])
		if !ok {
			break
		}
		first = up
	}
	list := w.listOf(first)
	i := slices.Index(list, first)
	if i < 0 {
		return
	}
	last := first
	for _, s := range list[i:] {
		if w.fset.Position(s.Pos()).Line <= rp.EndLine {
			last = s
		}
	}
	site := w.in.site(trace.Site{File: rp.Begin.File, Line: rp.Begin.Line, Col: rp.BeginCol, Func: rp.Func}, "", 0, 0)
	finish := fmt.Sprintf("%s.Finish(%s)", rtName, w.regionID(rp.ID))
	if body := w.bodyOf(first); body != nil && (w.fset.Position(body.Rbrace).Line <= rp.EndLine || w.endsBody(last)) {
		// A region to the function's end (a deferred unlock's, or one
		// whose last statement is the function's) ends when the function
		// returns, after the calls deferred in it, whichever way it
		// returns.
		w.before(first, prioBegin, fmt.Sprintf("%s.Begin(%s, %s); defer %s", rtName, w.regionID(rp.ID), w.siteID(site), finish))
		return
	}
	w.before(first, prioBegin, fmt.Sprintf("%s.Begin(%s, %s)", rtName, w.regionID(rp.ID), w.siteID(site)))
	for _, s := range list[i : slices.Index(list, last)+1] {
		ast.Inspect(s, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				if st, ok := w.stmtOf(n); ok && st == ast.Stmt(n) {
					w.before(n, prioFinish, finish)
				}
			}
			return true
		})
	}
	if !terminates(last) {
		w.after(last, finish)
	}
}

// enters places an entry probe (avrt.Enter) at the start of each of the
// file's functions that has accesses the plan does not probe, so that the
// recorder can list those of the functions the run entered, as the Delve
// recorder's breakpoints at their entries do.
func (w *fileRewriter) enters() {
	for n, name := range w.funcs {
		id, ok := w.in.enterIDs[name]
		if !ok {
			continue
		}
		body := funcBody(n)
		if body == nil {
			continue
		}
		w.insert(body.Lbrace+1, prioBegin, fmt.Sprintf("%s.Enter(%s); ", rtName, w.enterID(id)))
		w.entries = append(w.entries, id)
	}
}

// bodyOf returns the body of the function n is in.
func (w *fileRewriter) bodyOf(n ast.Node) *ast.BlockStmt {
	for cur := n; cur != nil; cur = w.parents[cur] {
		switch f := cur.(type) {
		case *ast.FuncLit:
			return f.Body
		case *ast.FuncDecl:
			return f.Body
		}
	}
	return nil
}

// listOf returns the statement list that holds st.
func (w *fileRewriter) listOf(st ast.Stmt) []ast.Stmt {
	switch p := w.parents[st].(type) {
	case *ast.BlockStmt:
		return p.List
	case *ast.CaseClause:
		return p.Body
	case *ast.CommClause:
		return p.Body
	}
	return nil
}

// endsBody reports whether st is the last statement of its function's
// body.
func (w *fileRewriter) endsBody(st ast.Stmt) bool {
	b, ok := w.parents[st].(*ast.BlockStmt)
	if !ok || len(b.List) == 0 || b.List[len(b.List)-1] != st {
		return false
	}
	switch w.parents[b].(type) {
	case *ast.FuncDecl, *ast.FuncLit:
		return true
	}
	return false
}

// terminates reports whether control never goes from s to the statement
// after it: a branch (break, continue, goto), or a terminating statement
// as the Go specification has it, after which nothing may be inserted
// where the function must end in one (a switch whose every case
// returns).
func terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.ExprStmt:
		if c, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
		}
	case *ast.BlockStmt:
		return len(s.List) > 0 && terminates(s.List[len(s.List)-1])
	case *ast.IfStmt:
		return s.Else != nil && terminates(s.Body) && terminates(s.Else)
	case *ast.LabeledStmt:
		return terminatesAs(s.Stmt, s.Label.Name)
	case *ast.ForStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
		return terminatesAs(s, "")
	}
	return false
}

// terminatesAs is terminates for a for, switch or select statement
// labelled label (or not, if ""): a for without a condition, a switch
// with a default or a select, each of whose cases ends in a terminating
// statement (or a switch's fallthrough), that no break leaves.
func terminatesAs(s ast.Stmt, label string) bool {
	var clauses []ast.Stmt
	switch s := s.(type) {
	case *ast.ForStmt:
		return s.Cond == nil && !breaks(s.Body, label)
	case *ast.SwitchStmt:
		clauses = s.Body.List
	case *ast.TypeSwitchStmt:
		clauses = s.Body.List
	case *ast.SelectStmt:
		clauses = s.Body.List
	default:
		return terminates(s)
	}
	hasDefault := false
	for _, c := range clauses {
		var body []ast.Stmt
		switch c := c.(type) {
		case *ast.CaseClause:
			hasDefault = hasDefault || c.List == nil
			body = c.Body
		case *ast.CommClause:
			body = c.Body
		}
		if len(body) == 0 {
			return false
		}
		last := body[len(body)-1]
		if b, ok := last.(*ast.BranchStmt); ok && b.Tok == token.FALLTHROUGH {
			continue
		}
		if b, ok := last.(*ast.BranchStmt); (ok && b.Tok == token.BREAK) || !terminates(last) {
			return false
		}
		for _, st := range body {
			if breaks(st, label) {
				return false
			}
		}
	}
	if _, ok := s.(*ast.SelectStmt); !ok && !hasDefault {
		return false
	}
	return true
}

// breaks reports whether n holds a break out of the statement around
// it, labelled label (or not, if ""): a break with that label, or one
// without a label outside any inner for, switch or select.
func breaks(n ast.Node, label string) bool {
	found := false
	var walk func(n ast.Node, inner bool)
	walk = func(n ast.Node, inner bool) {
		ast.Inspect(n, func(m ast.Node) bool {
			switch m := m.(type) {
			case *ast.FuncLit:
				return false
			case *ast.BranchStmt:
				if m.Tok == token.BREAK && (m.Label == nil && !inner || m.Label != nil && m.Label.Name == label) {
					found = true
				}
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				if m != n {
					walk(m, true)
					return false
				}
			}
			return !found
		})
	}
	switch n.(type) {
	case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
		walk(n, true) // n's own breaks are its own
	default:
		walk(n, false)
	}
	return found
}

// tests places, in a test file, a probe at the start of each top-level
// test that does not call t.Parallel and of each example, and one
// deferred for the return of every top-level test and example
// (avrt.TestBegin, TestEnd); a test also registers the cleanups that
// record its cleanups' start and end (avrt.TestCleanups, TestEnd): the
// testing package runs the first kind one after another, cleanups
// included, and the examples after them, and the converter orders them
// so (convert.go); a test's return also lets its parallel subtests go
// on. A test that calls t.Parallel, and a benchmark, begin with
// avrt.TestGo instead: their goroutines are the testing package's, which
// the converter tells from those that other code not rewritten starts.
func (w *fileRewriter) tests() {
	if !strings.HasSuffix(w.name, "_test.go") {
		return
	}
	for _, d := range w.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Body == nil {
			continue
		}
		fn, ok := w.info.Defs[fd.Name].(*types.Func)
		if !ok {
			continue
		}
		sig := fn.Type().(*types.Signature)
		switch {
		case isTestName(fd.Name.Name, "Test") && sig.Params().Len() == 1 && sig.Results().Len() == 0 && isTestingT(sig.Params().At(0).Type()):
			if w.in.tests == nil {
				w.in.tests = make(map[string]string)
			}
			w.in.tests[fn.FullName()] = fd.Name.Name
		case isTestName(fd.Name.Name, "Example") && sig.Params().Len() == 0 && sig.Results().Len() == 0:
			// The testing package runs the examples on the main
			// goroutine, one after another, once the tests are done.
		case isTestName(fd.Name.Name, "Benchmark") && sig.Params().Len() == 1 && sig.Results().Len() == 0 && isTestingB(sig.Params().At(0).Type()):
			// A benchmark runs on goroutines of the testing package's,
			// each run with others' ends between them; only that it
			// is a test's goroutine is recorded (avrt.TestGo).
			site := w.siteAt(fd.Name, false, "", 0)
			w.insert(fd.Body.Lbrace+1, prioTest, fmt.Sprintf("%s.TestGo(%s); ", rtName, w.siteID(site)))
			continue
		default:
			continue
		}
		parallel := false
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if _, ok := n.(*ast.FuncLit); ok {
				return false // a subtest's, say
			}
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" {
					if tv, ok := w.info.Types[sel.X]; ok && isTestingT(tv.Type) {
						parallel = true
					}
				}
			}
			return !parallel
		})
		site := w.siteAt(fd.Name, false, "", 0)
		// An example has no T, and no cleanups.
		text := fmt.Sprintf("defer %s.TestEnd(nil, %s); ", rtName, w.siteID(site))
		if fd.Type.Params.NumFields() == 1 {
			t := w.testParam(fd)
			text = fmt.Sprintf("%s.TestCleanups(%s, %s); defer %s.TestEnd(%s, %s); ", rtName, t, w.siteID(site), rtName, t, w.siteID(site))
		}
		if !parallel {
			text = fmt.Sprintf("%s.TestBegin(%s); ", rtName, w.siteID(site)) + text
		} else {
			// A parallel test's goroutine is the testing package's.
			text = fmt.Sprintf("%s.TestGo(%s); ", rtName, w.siteID(site)) + text
		}
		w.insert(fd.Body.Lbrace+1, prioTest, text)
	}
}

// testParam returns the name of the *testing.T parameter of a top-level
// test, which the probes of its end pass to the recording runtime; a
// parameter without a name, or named _, is given one.
func (w *fileRewriter) testParam(fd *ast.FuncDecl) string {
	const name = "avcheckT"
	field := fd.Type.Params.List[0]
	switch {
	case len(field.Names) == 0:
		w.replace(field.Type.Pos(), field.Type.Pos(), name+" ")
	case field.Names[0].Name == "_":
		w.replace(field.Names[0].Pos(), field.Names[0].End(), name)
	default:
		return field.Names[0].Name
	}
	return name
}

// deferredOrGo reports whether c is the call of a defer or go statement,
// whose arguments are evaluated at the statement and whose call runs
// later: code wrapped around c would run at the statement.
func (w *fileRewriter) deferredOrGo(c *ast.CallExpr) bool {
	switch p := w.parents[c].(type) {
	case *ast.DeferStmt:
		return p.Call == c
	case *ast.GoStmt:
		return p.Call == c
	}
	return false
}

// testingCall places the probes of the order in which the testing
// package runs a test's subtests (avrt.Sub and Ran around t.Run) and
// its parallel tests (avrt.TestParallel and TestResume around
// t.Parallel), which the converter records as the Delve recorder does
// (testorder.go), and those of TestMain's call of m.Run, which the
// tests happen after and TestMain goes on after (avrt.RunTests).
func (w *fileRewriter) testingCall(c *ast.CallExpr, fn *types.Func) {
	switch fn.FullName() {
	case "(*testing.M).Run":
		sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
		if !ok || len(c.Args) != 0 || w.deferredOrGo(c) {
			return
		}
		site := w.siteAt(c, false, "", trace.ObjWaitGroup)
		w.replace(c.Pos(), sel.X.Pos(), rtName+".RunTests(")
		w.replace(sel.X.End(), c.End(), fmt.Sprintf(", %s)", w.siteID(site)))
	case "(*testing.T).Run":
		if len(c.Args) != 2 || w.deferredOrGo(c) {
			return
		}
		if _, ok := w.info.TypeOf(c.Args[1]).Underlying().(*types.Signature); !ok {
			return // nil
		}
		site := w.siteAt(c, false, "", trace.ObjWaitGroup)
		w.replace(c.Pos(), c.Pos(), rtName+".Ran(")
		w.replace(c.Args[1].Pos(), c.Args[1].Pos(), rtName+".Sub(")
		w.replace(c.Args[1].End(), c.Args[1].End(), fmt.Sprintf(", %s)", w.siteID(site)))
		w.replace(c.End(), c.End(), fmt.Sprintf(", %s)", w.siteID(site)))
	case "(*testing.T).Parallel":
		st, ok := w.stmtOf(c)
		if es, isExpr := st.(*ast.ExprStmt); !ok || !isExpr || ast.Unparen(es.X) != c {
			return
		}
		site := w.siteAt(c, false, "", trace.ObjWaitGroup)
		w.before(st, prioProbe, fmt.Sprintf("%s.TestParallel(%s)", rtName, w.siteID(site)))
		w.after(st, fmt.Sprintf("%s.TestResume(%s)", rtName, w.siteID(site)))
	}
}

// isTestName reports whether name is a test's or an example's, as go
// test finds them: prefix (Test, Example), then nothing or a character
// that is not a lower-case letter.
func isTestName(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r := []rune(rest)[0]
	return !unicode.IsLower(r)
}

// isTestingT reports whether t is *testing.T.
func isTestingT(t types.Type) bool { return isTesting(t, "T") }

// isTestingB reports whether t is *testing.B.
func isTestingB(t types.Type) bool { return isTesting(t, "B") }

func isTesting(t types.Type, name string) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := p.Elem().(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "testing" && n.Obj().Name() == name
}

// funcBody returns the body of a function declaration or literal, nil for
// another node or a declaration without a body.
func funcBody(n ast.Node) *ast.BlockStmt {
	switch f := n.(type) {
	case *ast.FuncDecl:
		return f.Body
	case *ast.FuncLit:
		return f.Body
	}
	return nil
}
