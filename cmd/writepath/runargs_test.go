package main

import (
	"fmt"
	"testing"
)

func TestSplitOwnFlags(t *testing.T) {
	own := map[string]bool{"coordinator": true, "workers": true, "json": false, "select": true}
	tests := []struct {
		in         []string
		mine, kind string
	}{
		{[]string{"--name=x", "--rw=randwrite", "--workers", "3", "--json"},
			"[--workers 3 --json]", "[--name=x --rw=randwrite]"},
		{[]string{"--select=disk=nvme", "job.fio", "--coordinator=h:1"},
			"[--select=disk=nvme --coordinator=h:1]", "[job.fio]"},
		{[]string{"--bs", "4k", "--", "--workers", "9"}, "[]", "[--bs 4k --workers 9]"},
	}
	for _, tt := range tests {
		mine, kind := splitOwnFlags(tt.in, own)
		if fmt.Sprint(mine) != tt.mine || fmt.Sprint(kind) != tt.kind {
			t.Errorf("splitOwnFlags(%q) = %v, %v; want %s, %s", tt.in, mine, kind, tt.mine, tt.kind)
		}
	}
}

func TestLeadingPhases(t *testing.T) {
	isPhase := func(s string) bool { return s == "prepare" || s == "run" }
	ph, rest := leadingPhases([]string{"prepare", "run", "--tables=4", "run"}, isPhase)
	if fmt.Sprint(ph) != "[prepare run]" || fmt.Sprint(rest) != "[--tables=4 run]" {
		t.Errorf("leadingPhases = %v, %v", ph, rest)
	}
}
