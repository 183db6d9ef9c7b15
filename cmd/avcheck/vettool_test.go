package main

import "testing"

func TestGoRunBuild(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/tmp/go-build3418745823/b001/exe/avcheck", true},
		{"/home/me/.cache/tmp/go-build12/b001/exe/avcheck", true},
		{"/home/me/go/bin/avcheck", false},
		{"/tmp/avcheck", false},
		{"/srv/exe/avcheck", false},
	} {
		if got := goRunBuild(tc.path); got != tc.want {
			t.Errorf("goRunBuild(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
