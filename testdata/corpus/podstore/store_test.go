package podstore

import (
	"testing"

	"github.com/avcheck/avcheck/testdata/corpus/internal/turn"
)

// TestInformerController has the informer apply three watch events while
// a controller gets a pod and lists them all, logging both; the recorded
// run is serial (see package turn).
func TestInformerController(t *testing.T) {
	s := NewStore()
	s.Add("default/db", &Pod{Name: "db", Phase: "Running"})
	turn.Serial(
		func() {
			s.Add("default/web", &Pod{Name: "web", Phase: "Pending"})
			s.Update("default/web", &Pod{Name: "web", Phase: "Running"})
			s.Delete("default/db")
		},
		func() {
			if p, ok := s.Get("default/web"); ok {
				t.Logf("web is %s", p.Phase)
			}
			t.Logf("%d pods", len(s.List()))
		},
	)
	if p, ok := s.Get("default/web"); !ok || p.Phase != "Running" {
		t.Errorf("web is %v, %v; want Running", p, ok)
	}
}
