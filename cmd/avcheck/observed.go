package main

import (
	"errors"
	"io"

	"github.com/avcheck/avcheck/dynamic/predict"
	"github.com/avcheck/avcheck/dynamic/report"
	"github.com/avcheck/avcheck/dynamic/trace"
)

// observeFile is observed mode over a trace file in one streaming pass:
// each event is parsed and validated (on a goroutine of its own, see
// trace.ReadAhead) and then given to the observed engine
// (predict.Observed), so memory depends on the goroutines, objects and
// channel messages in flight, not on the trace's length. It returns the
// first cycle found, the statistics of the report, and a trace holding
// only the sites and objects the report names.
func observeFile(path string, format trace.Format) (*trace.Trace, []predict.Finding, report.Stats, error) {
	var st report.Stats
	file, err := openTrace(path, format)
	if err != nil {
		return nil, nil, st, err
	}
	defer file.Close()
	r := trace.ReadAhead(file, trace.NewValidator(file))
	defer r.Close()
	o := predict.NewObserved(predict.ObservedOptions{Object: r.Object})
	var gs, vs idSet
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, st, readError(path, err)
		}
		st.Events++
		gs.add(uint64(e.G))
		if e.Kind == trace.KindRead || e.Kind == trace.KindWrite {
			vs.add(uint64(e.Obj))
		}
		// The report gives the first cycle only, and later events cannot
		// change it: once one is found the rest of the trace is only
		// validated and counted.
		if !o.Found() {
			o.Step(&e)
		}
	}
	st.Goroutines, st.Variables = gs.n, vs.n
	f := o.Finish()
	if f == nil {
		return &trace.Trace{}, nil, st, nil
	}
	fs := []predict.Finding{*f}
	return namesOf(r, fs), fs, st, nil
}

// namesOf returns a trace without events that describes the sites and
// objects findings refer to, which is all a report of findings without
// witnesses looks up.
func namesOf(r trace.Reader, fs []predict.Finding) *trace.Trace {
	t := &trace.Trace{Sites: []trace.Site{{}}, Objects: make(map[trace.ObjID]trace.Object)}
	for _, f := range fs {
		for _, a := range f.Accesses {
			for int(a.Site) >= len(t.Sites) {
				t.Sites = append(t.Sites, trace.Site{})
			}
			t.Sites[a.Site] = r.Site(a.Site)
			if o := r.Object(a.Obj); o != (trace.Object{}) {
				t.Objects[a.Obj] = o
			}
		}
	}
	return t
}

// idSet counts distinct ids. Goroutine and object ids are mostly small and
// dense, so those take a bit each; the rest go to a map.
type idSet struct {
	n     int
	dense []uint64
	more  map[uint64]bool
	// recent holds ids of more, id+1 in the slot id gives: most lookups
	// of a trace whose ids are all large end here.
	recent [1024]uint64
}

const idSetDense = 1 << 22

func (s *idSet) add(id uint64) {
	if id < idSetDense {
		w := id / 64
		for int(w) >= len(s.dense) {
			s.dense = append(s.dense, 0)
		}
		if bit := uint64(1) << (id % 64); s.dense[w]&bit == 0 {
			s.dense[w] |= bit
			s.n++
		}
		return
	}
	r := &s.recent[id%uint64(len(s.recent))]
	if *r == id+1 {
		return
	}
	*r = id + 1
	if s.more == nil {
		s.more = make(map[uint64]bool)
	}
	if !s.more[id] {
		s.more[id] = true
		s.n++
	}
}
