package predict

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/avcheck/avcheck/dynamic/trace"
)

// This file merges findings that name the same source-site combination,
// as PECAN reports each anomaly once per combination of source lines
// (shared/seeds/003_50220ead9b146295.txt, section 8.2), and orders them for
// reports.

// DedupeKey returns the key findings are merged on: the kind, the pattern
// and the sites of the accesses in order.
func DedupeKey(f *Finding) string {
	b := []byte(string(f.Kind))
	b = append(b, '|')
	b = append(b, f.Pattern...)
	for _, a := range f.Accesses {
		b = append(b, '|')
		b = strconv.AppendUint(b, uint64(a.Site), 10)
		b = append(b, opClass(a.Op))
	}
	if f.Kind == KindRace && len(f.Accesses) == 2 {
		// A race is the same whichever access was recorded first.
		x, y := f.Accesses[0], f.Accesses[1]
		if x.Site > y.Site || x.Site == y.Site && opClass(x.Op) > opClass(y.Op) {
			x, y = y, x
		}
		b = []byte("race|" + strconv.FormatUint(uint64(x.Site), 10) + string(opClass(x.Op)) + "|" + strconv.FormatUint(uint64(y.Site), 10) + string(opClass(y.Op)))
	}
	return string(b)
}

// opClass is what an access's operation counts as in a finding's key:
// 'w' for a write, plain or atomic, 'r' for a read. An atomic operation
// is recorded with the plain access of its variable that it also makes
// (trace.Outside), at the same site: a violation through either is one
// finding, not two ("atomically updates" and "writes").
func opClass(k trace.Kind) byte {
	if k.IsWrite() {
		return 'w'
	}
	return 'r'
}

// Dedupe merges findings with the same DedupeKey, summing their counts (a
// zero Count counts as one). The finding kept for a key is the most
// credible one: reported before dropped, then the higher level, then the
// one with a witness, then the first. It reuses fs's array for the result.
func Dedupe(fs []Finding) []Finding {
	byKey := make(map[string]int)
	out := fs[:0]
	for _, f := range fs {
		n := max(f.Count, 1)
		k := DedupeKey(&f)
		i, ok := byKey[k]
		if !ok {
			byKey[k] = len(out)
			f.Count = n
			out = append(out, f)
			continue
		}
		old := &out[i]
		total := old.Count + n
		if better(&f, old) {
			*old = f
		}
		old.Count = total
	}
	clear(fs[len(out):])
	return out
}

func better(a, b *Finding) bool {
	if (a.Dropped == "") != (b.Dropped == "") {
		return a.Dropped == ""
	}
	if a.Level != b.Level {
		return a.Level > b.Level
	}
	return a.Witness != nil && b.Witness == nil
}

// SortFindings orders findings by the source position of their accesses,
// then by kind and pattern, so that reports are stable.
func SortFindings(t *trace.Trace, fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		for i := 0; i < len(a.Accesses) && i < len(b.Accesses); i++ {
			sa, sb := t.Site(a.Accesses[i].Site), t.Site(b.Accesses[i].Site)
			if c := cmp.Or(cmp.Compare(sa.File, sb.File), cmp.Compare(sa.Line, sb.Line), cmp.Compare(sa.Col, sb.Col)); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(len(a.Accesses), len(b.Accesses)); c != 0 {
			return c
		}
		if c := cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Pattern, b.Pattern)); c != 0 {
			return c
		}
		for i := range a.Accesses {
			if c := cmp.Compare(a.Accesses[i].Seq, b.Accesses[i].Seq); c != 0 {
				return c
			}
		}
		return 0
	})
}
