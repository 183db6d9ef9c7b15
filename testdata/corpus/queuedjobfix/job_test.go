package queuedjobfix

import "testing"

func TestSubmit(t *testing.T) {
	q := make(chan *Job, 1)
	done := make(chan struct{})
	go Work(q, done)
	j := Submit(q)
	close(q)
	<-done
	if s := j.State(); s != "running" && s != "queued" {
		t.Fatalf("state %q", s)
	}
}
