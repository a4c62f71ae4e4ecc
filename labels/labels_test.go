package labels

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   []string
		want map[string]string
		err  string
	}{
		{nil, map[string]string{}, ""},
		{[]string{"disk=nvme", "rack=r1"}, map[string]string{"disk": "nvme", "rack": "r1"}, ""},
		{[]string{"k="}, map[string]string{"k": ""}, ""},
		{[]string{"a=b=c"}, map[string]string{"a": "b=c"}, ""},
		{[]string{"novalue"}, nil, "want key=value"},
		{[]string{"=v"}, nil, "want key=value"},
		{[]string{"a=1", "a=2"}, nil, "given twice"},
		{[]string{"a=x\ny"}, nil, "control character"},
		{[]string{"a=\xff"}, nil, "invalid UTF-8"},
		{[]string{strings.Repeat("k", MaxKey+1) + "=v"}, nil, "key of 64 bytes, the limit is 63"},
		{[]string{"k=" + strings.Repeat("v", MaxValue+1)}, nil, "value of 256 bytes, the limit is 255"},
		{make([]string, MaxPairs+1), nil, "33 pairs, the limit is 32"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in, "--label")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%.40q) = %v, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("Parse(%q)[%q] = %q; want %q", tt.in, k, got[k], v)
			}
		}
	}
}

// TestParseEchoBounded: a 5 MB label is refused in a short message.
func TestParseEchoBounded(t *testing.T) {
	_, err := Parse([]string{"k=" + strings.Repeat("v", 5<<20)}, "--label")
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("Parse(5 MB value): %d-byte error", len(err.Error()))
	}
	err = Check("hello labels", map[string]string{strings.Repeat("k", 5<<20): "v"})
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("Check(5 MB key): %d-byte error", len(err.Error()))
	}
}
