package record

import (
	"bytes"
	"fmt"
	"go/version"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// The synchronisation of other modules.
//
// The packages under test often synchronise through packages of other
// modules: a semaphore, an errgroup, a pool of workers. Their accesses
// are not the user's, but their lock and channel operations, go
// statements and WaitGroup, Cond, Once and atomic calls order the user's
// accesses; left unrecorded, they leave the prediction free to reorder
// what they order, and so to report violations no run can have. So the
// packages of other modules that the packages under test import are
// rewritten too, for their synchronisation only (fileRewriter.code, with
// no access or region probe).
//
// The go command refuses an overlay of a file in the module cache, so a
// module whose packages are rewritten is copied out of it into an entry
// of avcheck's cache (cache.go), where later builds find it and the go
// build cache its packages (its files hard-linked where the file system
// allows it, copied where not), the
// rewritten files written over their copies, and the main module's go.mod
// (itself an overlay) replaces the module by the copy. A module that is
// not in the module cache (replaced by a directory of the user's) is
// rewritten through the overlay, as the packages under test are. A
// module that the main module replaces by another module's version is
// left as it is: a second replacement of its path would conflict with
// the user's.
//
// The rewritten calls of the runtime are calls of generic functions, so a
// copy whose go.mod asks for a Go older than rtGoVersion is raised to it
// (a language version the code compiled under keeps compiling, save a
// change of meaning of no construct before Go 1.22). The rewriting gives
// every token after the package clause its position in the module cache
// back (a /*line*/ comment), so panics and findings name the files the
// user can open. If the build with the rewritten modules fails all the
// same, BuildInstrumented builds without them and says so.

// depModule is a module of other packages than the main module's, as the
// build uses it.
type depModule struct {
	path string
	// dir is the module's directory; copied says it is in the module
	// cache, so that the module is copied, not overlaid.
	dir    string
	copied bool
	files  []depFile
	// probed says a file of the module has probes, not only its
	// positions given back: the module is rewritten.
	probed bool
}

type depFile struct {
	name string // the file's path in dir
	out  []byte // the rewritten file
}

// instrumentDeps rewrites the synchronisation of the packages of other
// modules that the plan's packages import, into dir/mod, and returns the
// lines that the main module's go.mod needs (its replaces of the copied
// modules). The files rewritten through the overlay are added to
// replace.
func (in *Instrumented) instrumentDeps(dir string, replace map[string]string) (goMod string, err error) {
	mods := make(map[string]*depModule)
	deferred := in.Deferred
	defer func() { in.Deferred = deferred }() // not the user's to act on
	seen := make(map[string]bool)
	var pkgs []*packages.Package
	packages.Visit(in.plan.pkgs, nil, func(p *packages.Package) {
		if seen[p.ID] || p.Module == nil || p.Module.Main || p.TypesInfo == nil {
			return
		}
		seen[p.ID] = true
		pkgs = append(pkgs, p)
	})
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].ID < pkgs[j].ID })
	for _, p := range pkgs {
		m := p.Module
		if m.Replace != nil {
			if m.Replace.Version != "" {
				in.OtherModules.Left = append(in.OtherModules.Left, m.Path+": replaced by "+m.Replace.Path+" "+m.Replace.Version+" in go.mod")
				continue
			}
			m = m.Replace
		}
		dm := mods[p.Module.Path]
		if dm == nil {
			dm = &depModule{path: p.Module.Path, dir: m.Dir, copied: m.Version != "" && m.Dir != ""}
			mods[p.Module.Path] = dm
		}
		for i, f := range p.Syntax {
			if i >= len(p.CompiledGoFiles) {
				break
			}
			name := p.CompiledGoFiles[i]
			if !strings.HasSuffix(name, ".go") || importsC(f) {
				continue
			}
			if dm.copied && !within(dm.dir, name) {
				continue // a generated file: compiled from where it is
			}
			src, err := os.ReadFile(name)
			if err != nil {
				return "", err
			}
			w := newFileRewriter(in, p, f, name, src)
			if w == nil {
				continue
			}
			w.syncOnly = true
			out, changed, err := w.rewrite()
			if err != nil {
				in.OtherModules.Left = append(in.OtherModules.Left, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			if !changed {
				if !dm.copied {
					continue
				}
				// Compiled from the copy: give its positions back.
				out = w.positioned()
			}
			dm.probed = dm.probed || changed
			dm.files = append(dm.files, depFile{name, out})
		}
	}
	paths := make([]string, 0, len(mods))
	for path := range mods {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	var lines strings.Builder
	for _, path := range paths {
		dm := mods[path]
		if !dm.probed {
			continue
		}
		in.OtherModules.Rewritten = append(in.OtherModules.Rewritten, path)
		if !dm.copied {
			files := dm.files
			if dm.dir != "" {
				goMod := filepath.Join(dm.dir, "go.mod")
				if mod, err := os.ReadFile(goMod); err == nil {
					if raised := raiseGo(mod); !bytes.Equal(raised, mod) {
						files = append(files, depFile{goMod, raised})
					}
				}
			}
			for _, f := range files {
				copyPath := filepath.Join(dir, strconv.Itoa(len(replace))+"_"+filepath.Base(f.name))
				if err := os.WriteFile(copyPath, f.out, 0o600); err != nil {
					return "", err
				}
				replace[f.name] = copyPath
			}
			continue
		}
		to, err := dm.copy(dir, in.cache, len(in.OtherModules.Rewritten))
		if err != nil {
			return "", fmt.Errorf("copying %s: %w", path, err)
		}
		fmt.Fprintf(&lines, "\nreplace %s => %s\n", path, to)
	}
	return lines.String(), nil
}

// within reports whether name is a file under dir.
func within(dir, name string) bool {
	rel, err := filepath.Rel(dir, name)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..")
}

// goLine is a go.mod's go directive.
var goLine = regexp.MustCompile(`(?m)^go[ \t]+([0-9][^ \t\r\n/]*)[ \t]*(//.*)?\r?$`)

// copy copies the module into an entry of the cache (cache.go) named by
// what the copy holds, the module's directory in the module cache, its
// rewritten files and the Go its go.mod is raised to, and returns its
// directory; without a cache, into dir/mod/n.
func (dm *depModule) copy(dir, cache string, n int) (string, error) {
	if cache == "" {
		to := filepath.Join(dir, "mod", strconv.Itoa(n))
		return to, dm.copyTo(to)
	}
	k := newContentKey("module")
	k.add(dm.path, dm.dir)
	k.add("go", rtGoVersion)
	files := slices.Clone(dm.files)
	slices.SortFunc(files, func(a, b depFile) int { return strings.Compare(a.name, b.name) })
	for _, f := range files {
		k.add(f.name, string(f.out))
	}
	return cachedDir(cache, k.name("mod"), dm.copyTo)
}

// copyTo copies the module into to: its files hard-linked, or copied,
// the rewritten ones written in their place, and its go.mod raised to
// the runtime's Go where it asks for less.
func (dm *depModule) copyTo(to string) error {
	rewritten := make(map[string][]byte, len(dm.files))
	for _, f := range dm.files {
		rewritten[f.name] = f.out
	}
	err := filepath.WalkDir(dm.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dm.dir, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o700)
		case !d.Type().IsRegular():
			return nil
		}
		if out, ok := rewritten[path]; ok {
			return os.WriteFile(dst, out, 0o600)
		}
		if rel == "go.mod" {
			return nil // written below
		}
		return linkOrCopy(path, dst)
	})
	if err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(dm.dir, "go.mod"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(mod) == 0 {
		mod = []byte("module " + strconv.Quote(dm.path) + "\n")
	}
	return os.WriteFile(filepath.Join(to, "go.mod"), raiseGo(mod), 0o600)
}

// raiseGo returns a go.mod whose go directive asks for rtGoVersion at
// least.
func raiseGo(mod []byte) []byte {
	m := goLine.FindSubmatchIndex(mod)
	if m == nil {
		return fmt.Appendf(mod, "\ngo %s\n", rtGoVersion)
	}
	if v := string(mod[m[2]:m[3]]); version.Compare("go"+v, "go"+rtGoVersion) >= 0 {
		return mod
	}
	out := append([]byte(nil), mod[:m[2]]...)
	out = append(out, rtGoVersion...)
	return append(out, mod[m[3]:]...)
}

func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// positioned returns the file unchanged but for a /*line*/ comment after
// its package clause, which gives the rest of the file the positions of
// the file it was copied from.
func (w *fileRewriter) positioned() []byte {
	end := w.off(w.file.Name.End())
	out := append([]byte(nil), w.src[:end]...)
	out = append(out, w.lineDirective(w.file.Name.End())...)
	return append(out, w.src[end:]...)
}
