package trace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestValidateFixtures runs testdata/validate/*.txtar: each has a text
// trace in "-- trace --" and, in "-- expect --", "ok" or the exact error.
func TestValidateFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/validate/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := make(map[string]string)
			for _, f := range a.Files {
				sections[f.Name] = string(f.Data)
			}
			want := strings.TrimSpace(sections["expect"])
			tr, err := ReadAll(NewTextReader(strings.NewReader(sections["trace"]), "trace"))
			if err != nil {
				t.Fatalf("reading the trace: %v", err)
			}
			got := "ok"
			if err := Validate(tr); err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("Validate:\n got %s\nwant %s", got, want)
			}
			// The streaming form agrees with the whole-trace one.
			_, err = ValidateReader(NewTextReader(strings.NewReader(sections["trace"]), "trace"))
			got = "ok"
			if err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("ValidateReader:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestValidateForeignUnlock checks HolderUnlocks: a release by another
// goroutine than the holder is then impossible.
func TestValidateForeignUnlock(t *testing.T) {
	for src, want := range map[string]string{
		"avtrace 1\ng1 fork g2\ng1 acq mu\ng2 rel mu\n":   "event 2 (g2 rel mu): release of mu, which g2 does not hold",
		"avtrace 1\ng1 fork g2\ng1 racq rw\ng2 rrel rw\n": "event 2 (g2 rrel rw): read-release of rw, which g2 does not read-hold",
	} {
		r := NewTextReader(strings.NewReader(src), "t")
		v := NewValidator(r)
		v.HolderUnlocks = true
		var got string
		for {
			e, err := r.Next()
			if err != nil {
				break
			}
			if err := v.Step(e); err != nil {
				got = err.Error()
				break
			}
		}
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestValidateNoNames(t *testing.T) {
	v := NewValidator(nil)
	err := v.Step(Event{G: 1, Kind: KindRelease, Obj: 0x20, Site: 3})
	want := "event 0 (g1 rel 0x20 @3): release of 0x20, which is not locked"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	// The first error sticks.
	if err2 := v.Step(Event{Seq: 1, G: 1, Kind: KindRead}); !errors.Is(err2, err) {
		t.Errorf("second Step = %v, want the first error again", err2)
	}
}

func TestValidateIgnoreSeq(t *testing.T) {
	// A witness schedule: the trace's events reordered, Seq kept.
	events := []Event{
		{Seq: 0, G: 1, Kind: KindFork, Arg: 2},
		{Seq: 3, G: 2, Kind: KindWrite, Obj: 1},
		{Seq: 1, G: 1, Kind: KindRead, Obj: 1},
	}
	v := NewValidator(nil)
	v.IgnoreSeq = true
	for _, e := range events {
		if err := v.Step(e); err != nil {
			t.Fatal(err)
		}
	}
	v = NewValidator(nil)
	var err error
	for _, e := range events {
		if err = v.Step(e); err != nil {
			break
		}
	}
	want := "event 1 (g1 rd 0x1): sequence number 1 does not follow 3"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestValidateCapacity(t *testing.T) {
	src := "avtrace 1\nobj 0x1 chan ch cap=1\ng1 fork g2\ng1 send ch\ng1 send ch\ng2 recv ch\ng1 send ch\ng1 send ch\n"
	tr, err := ReadAll(NewTextReader(strings.NewReader(src), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(tr); err != nil {
		t.Errorf("without CheckCapacity: %v", err)
	}
	v := NewValidator(tr)
	v.CheckCapacity = true
	for _, e := range tr.Events {
		if err = v.Step(e); err != nil {
			break
		}
	}
	want := "event 5 (g1 send ch msg=4): send on ch while 2 messages wait, more than its capacity 1 allows"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
