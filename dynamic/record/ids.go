package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
)

// Probe ids.
//
// The rewritten code passes the runtime the id of each probe's site, of
// each region it begins and ends, and of each function whose entry it
// marks. Were these the build's own numbering (sites in the order the
// whole build declares them), a probe added to one package would change
// the bytes of every package rewritten after it, and the go build cache,
// which keys a package's compilation by its files' contents, would
// compile them all again: every dependency module rewritten for its
// synchronisation (deps.go) on every change of the user's code.
//
// So a file's ids are its own: the rewritten file declares a constant,
// its base, and names each id as the base plus the id's rank among the
// file's ids in the order they appear in it. The base is a hash of the
// file's path, chosen again (a hash of the path and an attempt number)
// in the rare build where the file's range of ids would overlap one that
// another file took; only that constant then changes. The file's bytes
// thus depend on its own source and plan alone, and Instrumented.raw
// maps the ids the runtime records back to the sites, regions and
// functions the converter knows.

// idKind says what a probe id stands for.
type idKind uint8

const (
	idSite   idKind = iota + 1 // a site, by its index in Instrumented.sites
	idRegion                   // a region, by its Plan.Regions id
	idEnter                    // a function, by its enterIDs id
)

// idKey is what a probe id stands for.
type idKey struct {
	kind idKind
	n    uint32
}

// id returns the text that names, in the rewritten file, the id of what
// k stands for: a mark that apply replaces by the base's constant plus
// the id's rank in the file. The mark's NUL bytes cannot be in Go source.
func (w *fileRewriter) id(kind idKind, n uint32) string {
	k := idKey{kind, n}
	i, ok := w.idOf[k]
	if !ok {
		if w.idOf == nil {
			w.idOf = make(map[idKey]int)
		}
		i = len(w.ids)
		w.idOf[k] = i
		w.ids = append(w.ids, k)
	}
	return "\x00" + strconv.Itoa(i) + "\x00"
}

// siteID, regionID and enterID name a site's, a region's and an entered
// function's probe ids in the rewritten file (id).
func (w *fileRewriter) siteID(site uint32) string { return w.id(idSite, site) }
func (w *fileRewriter) regionID(id int) string    { return w.id(idRegion, uint32(id)) }
func (w *fileRewriter) enterID(fn uint32) string  { return w.id(idEnter, fn) }
func (w *fileRewriter) baseName() string          { return "_avrtBase" + w.nameHash()[:16] }
func (w *fileRewriter) nameHash() string {
	h := sha256.Sum256([]byte(w.name))
	return hex.EncodeToString(h[:])
}

// numberIDs replaces the marks of id in out by the base's constant plus
// each id's rank in the order the ids first appear, claims the file's
// range of ids (Instrumented.claim), and declares the base after the
// file's last line, where it moves no line.
func (w *fileRewriter) numberIDs(out []byte) []byte {
	if len(w.ids) == 0 {
		return out
	}
	rank := make(map[int]uint32, len(w.ids))
	var order []idKey
	var b bytes.Buffer
	b.Grow(len(out))
	base := w.baseName()
	for {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			b.Write(out)
			break
		}
		j := bytes.IndexByte(out[i+1:], 0)
		if j < 0 {
			panic("unterminated probe id mark")
		}
		k, err := strconv.Atoi(string(out[i+1 : i+1+j]))
		if err != nil || k >= len(w.ids) {
			panic(fmt.Sprintf("bad probe id mark %q", out[i:i+2+j]))
		}
		r, ok := rank[k]
		if !ok {
			r = uint32(len(order))
			rank[k] = r
			order = append(order, w.ids[k])
		}
		b.Write(out[:i])
		fmt.Fprintf(&b, "%s+%d", base, r)
		out = out[i+2+j:]
	}
	first := w.in.claim(w.name, len(order))
	for r, k := range order {
		w.in.raw[first+uint32(r)] = k
	}
	fmt.Fprintf(&b, "\n\nconst %s = %d\n", base, first)
	return b.Bytes()
}

// claim returns the first of n consecutive raw ids for the file name, a
// hash of its path unless that range overlaps one another file took, and
// takes the range. No range holds 0, which the runtime's events use for
// no site.
func (in *Instrumented) claim(name string, n int) uint32 {
	for attempt := 0; ; attempt++ {
		key := name
		if attempt > 0 {
			key += "\x00" + strconv.Itoa(attempt)
		}
		h := sha256.Sum256([]byte(key))
		first := uint64(binary.LittleEndian.Uint32(h[:]))
		last := first + uint64(n) // exclusive
		if first == 0 || last > 1<<32 {
			continue
		}
		free := true
		for _, c := range in.claimed {
			if first < c[1] && c[0] < last {
				free = false
				break
			}
		}
		if free {
			in.claimed = append(in.claimed, [2]uint64{first, last})
			return uint32(first)
		}
	}
}
