package labels

import (
	"strings"
	"testing"
)

// FuzzParse: whatever the input, Parse either refuses it or returns pairs
// within the limits that Check accepts, and its error stays short.
func FuzzParse(f *testing.F) {
	f.Add("disk=nvme\nrack=r1")
	f.Add("a=b=c")
	f.Add("=v\n\nk=\xff")
	f.Fuzz(func(t *testing.T, s string) {
		kvs := strings.Split(s, "\n")
		m, err := Parse(kvs, "--select")
		if err != nil {
			if len(err.Error()) > 400 {
				t.Fatalf("error of %d bytes", len(err.Error()))
			}
			return
		}
		if len(m) != len(kvs) {
			t.Fatalf("Parse(%q) kept %d of %d pairs", kvs, len(m), len(kvs))
		}
		if err := Check("parsed", m); err != nil {
			t.Fatalf("Check(Parse(%q)) = %v", kvs, err)
		}
		for k, v := range m {
			if len(k) > MaxKey || len(v) > MaxValue || k == "" || strings.Contains(k, "=") {
				t.Fatalf("pair %q=%q out of bounds", k, v)
			}
		}
	})
}
