package record

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The instrumenting recorder's cache.
//
// The go build cache keys a package's compilation by the package's
// directory (unless -trimpath) and its files' contents, the files of an
// overlay by their contents alone. The runtime's module and the copies
// of other modules (deps.go) are directories of their own, which a
// temporary directory per build would make new each time: every package
// that imports the runtime, that is every package rewritten, would be
// compiled again at each build, and every module copied (about 50 s for
// a test binary that links x/tools and Delve, on two busy cores). So
// they are written once into a cache directory of the user's, each
// entry named by a hash of what it holds, and used again by every build
// that needs the same bytes. The rewritten files of the main module (and
// of modules replaced by a directory) and the overlay stay in the
// build's temporary directory: the go command hashes them by content.
//
// The cache is AVCHECK_CACHE if set ("off": none, each build's
// temporary directory as before), else avcheck/instrument under
// os.UserCacheDir (~/.cache on Linux): never in the user's tree. An
// entry is written into a temporary directory of the cache and renamed
// to its name, so that a build sees it whole or not at all, and two
// avcheck processes that write the same entry at once both use the one
// renamed first. Its files are hard links into the module cache where
// the file system allows it, so an entry takes little room of its own.
// An entry not used for trimAge is removed, by the first build after a
// day since the last removal, as the go build cache trims itself.

// EnvCache names the environment variable that overrides the cache's
// directory; the value "off" turns the cache off.
const EnvCache = "AVCHECK_CACHE"

const (
	// trimAge is how long an entry may go unused before it is removed;
	// trimEvery how often the cache is trimmed; touchEvery how stale an
	// entry's time of use may be before a build that uses it sets it.
	trimAge    = 5 * 24 * time.Hour
	trimEvery  = 24 * time.Hour
	touchEvery = time.Hour
	// tmpPrefix starts the names of the entries being written or removed.
	tmpPrefix = "tmp-"
)

// cacheDir returns the cache's directory, creating it, or "" if the
// cache is off or cannot be made (each build then writes its own copies
// into its temporary directory).
func cacheDir() string {
	dir := os.Getenv(EnvCache)
	switch dir {
	case "off":
		return ""
	case "":
		user, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(user, "avcheck", "instrument")
	}
	if !filepath.IsAbs(dir) || os.MkdirAll(dir, 0o700) != nil {
		return ""
	}
	trimCache(dir, time.Now())
	return dir
}

// cachedDir returns the directory of the cache entry name under root,
// calling write to fill it in a temporary directory first if it is not
// there.
func cachedDir(root, name string, write func(dir string) error) (string, error) {
	dir := filepath.Join(root, name)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		if time.Since(fi.ModTime()) > touchEvery {
			now := time.Now()
			_ = os.Chtimes(dir, now, now)
		}
		return dir, nil
	}
	tmp, err := os.MkdirTemp(root, tmpPrefix)
	if err != nil {
		return "", err
	}
	if err := write(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.RemoveAll(tmp)
		if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
			return dir, nil // another avcheck wrote it first
		}
		return "", err
	}
	return dir, nil
}

// trimCache removes the entries of the cache in root not used since
// trimAge before now (and the temporary directories of builds that
// stopped before renaming them), at most once in trimEvery. An entry is
// renamed before it is removed, so that no build finds it half removed.
func trimCache(root string, now time.Time) {
	mark := filepath.Join(root, "trim.txt")
	if fi, err := os.Stat(mark); err == nil && now.Sub(fi.ModTime()) < trimEvery {
		return
	}
	if err := os.WriteFile(mark, []byte(now.UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		return
	}
	_ = os.Chtimes(mark, now, now)
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < trimAge {
			continue
		}
		path := filepath.Join(root, e.Name())
		if !strings.HasPrefix(e.Name(), tmpPrefix) {
			gone, err := os.MkdirTemp(root, tmpPrefix)
			if err != nil {
				continue
			}
			if err := os.Rename(path, filepath.Join(gone, "entry")); err != nil {
				_ = os.Remove(gone)
				continue
			}
			path = gone
		}
		_ = os.RemoveAll(path)
	}
}

// contentKey hashes what an entry holds into its name.
type contentKey struct{ h hash.Hash }

func newContentKey(kind string) *contentKey {
	k := &contentKey{sha256.New()}
	k.add("avcheck instrument cache 1", kind)
	return k
}

// add hashes strings, each with its length, so that no two lists of
// strings hash alike by their concatenation.
func (k *contentKey) add(parts ...string) {
	for _, p := range parts {
		var n [8]byte
		for i, l := 0, len(p); i < 8; i, l = i+1, l>>8 {
			n[i] = byte(l)
		}
		k.h.Write(n[:])
		k.h.Write([]byte(p))
	}
}

// name returns the entry's name: prefix and the hash.
func (k *contentKey) name(prefix string) string {
	return prefix + "-" + hex.EncodeToString(k.h.Sum(nil))[:32]
}

// runtimeDir returns the directory of the runtime's module: an entry of
// the cache, or dir/avrt without one.
func runtimeDir(dir, cache string) (string, error) {
	if cache == "" {
		rt := filepath.Join(dir, "avrt")
		return rt, writeRuntime(rt)
	}
	names, err := fs.Glob(rtFiles, "avrt/*")
	if err != nil {
		return "", err
	}
	k := newContentKey("runtime")
	k.add(rtModule, rtGoVersion)
	for _, n := range names {
		data, err := rtFiles.ReadFile(n)
		if err != nil {
			return "", err
		}
		k.add(n, string(data))
	}
	return cachedDir(cache, k.name("avrt"), writeRuntime)
}
